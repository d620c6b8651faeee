import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sandboxEndingFailure } from '@veetbot/domain';
import { afterAll, describe, expect, it } from 'vitest';
import { classifyEnding } from '../src/ending';
import { BubblewrapSandbox, WorkspaceFileService } from '../src/index';
import { LIMITS } from './sandbox-fixture';

/**
 * Issue 23 item 4 (docs/adr/0058): a run's workspace is capped. A program starts with
 * RLIMIT_FSIZE at what the workspace has left, and the tree is measured while it runs; past the
 * cap (bytes or entries) the sandbox is killed with ending `disk_limit`, the next run does not
 * start, and workspace.write_text's helper refuses — one reason code for all three.
 */
const data = mkdtempSync(path.join(tmpdir(), 'veetbot-disk-'));
afterAll(() => rmSync(data, { recursive: true, force: true }));
const workspaces = path.join(data, 'workspaces');

function setup(maximumBytes: number, maximumEntries: number) {
  const workspace = path.join(workspaces, 'ef'.repeat(16), randomUUID());
  mkdirSync(workspace, { recursive: true, mode: 0o700 });
  const files = new WorkspaceFileService({ workspaceRoot: workspaces, maximumBytes, maximumEntries, confinement: 'process' });
  files.prepare(workspace);
  const sandbox = new BubblewrapSandbox({
    stateDir: path.join(data, 'sandbox'),
    workspaceRoot: workspaces,
    dataDir: data,
    workspaceFiles: files,
    diskPollMs: 100,
  });
  const sh = (script: string) =>
    sandbox.run(
      { argv: ['/bin/sh', '-c', script], workspaceHostPath: workspace, limits: { ...LIMITS, wallSeconds: 20 } },
      new AbortController().signal,
    );
  return { workspace, files, sh };
}

describe('the workspace disk cap', () => {
  it('one large file: killed at the cap (RLIMIT_FSIZE), then nothing more starts or is written', async () => {
    const { files, workspace, sh } = setup(8 * 1024 * 1024, 10_000);
    // The shell goes on past `head` (killed by SIGXFSZ) and exits 0: still the cap.
    const big = await sh('head -c 300000000 /dev/zero > big; echo wrote');
    expect(big.ending).toBe('disk_limit');

    const usage = await files.usageOf(workspace);
    expect(usage.ok && usage.value.bytes).toBeLessThanOrEqual(8 * 1024 * 1024 + 64 * 1024);
    // At (or within a block of) the cap: the next program cannot grow it, and the next write is refused.
    const fill = await sh('head -c 10000000 /dev/zero > more');
    expect(fill.ending).toBe('disk_limit');
    const written = await files.forFolder(workspace).write(['note.txt'], Buffer.alloc(1024 * 1024, 'x'), 'overwrite');
    expect(written).toMatchObject({ ok: false, code: 'disk_limit' });
    // Freeing space lets the run go on.
    // A program may still start at the cap, and free space.
    const freed = await sh('rm -f big more; echo ok');
    expect(freed.ending).toBe('exited');
    expect(freed.stdout.text).toBe('ok\n');
    expect((await files.forFolder(workspace).write(['note.txt'], Buffer.from('small'), 'overwrite')).ok).toBe(true);
    await files.close();
  }, 60_000);

  it('many small files: killed when the measured tree passes the entry cap', async () => {
    const { files, sh } = setup(64 * 1024 * 1024, 300);
    const many = await sh('i=0; while [ $i -lt 100000 ]; do i=$((i+1)); : > f$i; done; echo done');
    expect(many.ending).toBe('disk_limit');
    expect(many.stdout.text).not.toContain('done');
    await files.close();
  }, 60_000);

  it('reads SIGXFSZ (RLIMIT_FSIZE) as the cap', () => {
    expect(classifyEnding({ killedFor: null, exitCode: null, signal: 'SIGXFSZ', durationMs: 10, cpuSeconds: 5, stderrTail: '' })).toBe(
      'disk_limit',
    );
  });

  it('maps to one stable reason code', () => {
    const failure = sandboxEndingFailure('disk_limit', { durationMs: 5, outputLimitBytes: 1, detail: null });
    expect(failure.failure?.reason_code).toBe('tool.output_too_large.workspace_disk');
  });
});
