import { randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { WorkspaceFileService } from '@veetbot/sandbox-adapter';
import { compare, fmt } from './harness';

/**
 * ADR 0058's price: every workspace.* call is a round trip to the confined workspace helper
 * (JSON lines, base64 bodies, a walk by descriptor) instead of a path opened in the worker. The
 * baseline is that path opened in process (`fs.promises.readFile` / `writeFile` of the host
 * path: what a worker that trusted the path would do); the subject is `WorkspaceFiles.read` /
 * `write` through the helper, confined as the composition confines it. Context figures: no goal.
 */
export async function benchWorkspaceHelper(): Promise<string[]> {
  const data = mkdtempSync(path.join(tmpdir(), 'veetbot-bench-workspace-'));
  const workspaces = path.join(data, 'workspaces');
  const folder = path.join(workspaces, 'ab'.repeat(16), randomUUID());
  // The run folder only: what is inside is the helper's to make (as the sandbox user, for root).
  mkdirSync(folder, { recursive: true });
  const service = new WorkspaceFileService({ workspaceRoot: workspaces });
  try {
    const files = service.handle(folder).files;
    const lines: string[] = [];
    for (const size of [4 * 1024, 256 * 1024]) {
      const body = randomBytes(size);
      const hostPath = path.join(folder, 'docs', `f-${size}.bin`);
      const primed = await files.write(['docs', `f-${size}.bin`], body, 'overwrite');
      if (!primed.ok) throw new Error(`the helper refused the bench file: ${primed.code}`);
      const options = { warmup: 2, rounds: 7, batch: size > 65536 ? 100 : 400 };
      const read = await compare(
        { name: 'readFile in process', fn: async () => void (await readFile(hostPath)) },
        {
          name: 'WorkspaceFiles.read via the helper',
          fn: async () => {
            const answer = await files.read(['docs', `f-${size}.bin`], size);
            if (!answer.ok) throw new Error(answer.code);
          },
        },
        options,
      );
      const write = await compare(
        { name: 'writeFile in process', fn: () => writeFile(`${hostPath}.direct`, body) },
        {
          name: 'WorkspaceFiles.write via the helper',
          fn: async () => {
            const answer = await files.write(['docs', `w-${size}.bin`], body, 'overwrite');
            if (!answer.ok) throw new Error(answer.code);
          },
        },
        options,
      );
      const kib = `${size / 1024} KiB`;
      lines.push(
        `read ${kib}: helper ${fmt(read.subject.opsPerSecond)}/s (${(read.subject.nsPerOp / 1e6).toFixed(3)} ms) vs in process ${fmt(read.baseline.opsPerSecond)}/s: ${read.ratio.toFixed(1)}× the time`,
        `write ${kib} (flushed, renamed): helper ${fmt(write.subject.opsPerSecond)}/s (${(write.subject.nsPerOp / 1e6).toFixed(3)} ms) vs writeFile in process (not flushed) ${fmt(write.baseline.opsPerSecond)}/s: ${write.ratio.toFixed(1)}× the time`,
      );
    }
    lines.push(`helper confinement: ${service.confinement ?? 'not started'}`);
    return lines;
  } finally {
    await service.close();
    rmSync(data, { recursive: true, force: true });
  }
}
