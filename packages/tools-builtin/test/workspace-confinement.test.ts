import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ToolResult, isKnownReasonCode } from '@veetbot/domain';
import type { Tool } from '@veetbot/ports';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { parseWorkspacePath } from '../src/workspace/workspace-path';
import { createWorkspaceListTool } from '../src/workspace/workspace-list';
import { createWorkspaceReadTextTool } from '../src/workspace/workspace-read-text';
import { createWorkspaceWriteTextTool } from '../src/workspace/workspace-write-text';
import { createFakeContext } from './fake-context';
import { createTempWorkspace, SECRET_TEXT, type TempWorkspace } from './temp-workspace';

const readText = createWorkspaceReadTextTool();
const writeText = createWorkspaceWriteTextTool();
const list = createWorkspaceListTool();

let ws: TempWorkspace;
beforeEach(() => {
  ws = createTempWorkspace();
  mkdirSync(path.join(ws.root, 'docs'));
  writeFileSync(path.join(ws.root, 'docs', 'a.txt'), 'inside');
});
afterEach(() => ws.cleanup());

async function run(tool: Tool, args: Record<string, unknown>, root: string | null = ws.root) {
  const fake = createFakeContext({ workspaceRoot: root });
  const result = ToolResult.parse(await tool.execute(args, fake.context));
  return { result, marks: fake.markEffectSentCalls() };
}

function expectFailure(result: ToolResult, reasonCode: string): void {
  expect(result.ok).toBe(false);
  expect(result.content).toEqual([]);
  expect(result.failure?.reason_code).toBe(reasonCode);
  expect(isKnownReasonCode(reasonCode)).toBe(true);
  // The operator detail never carries what lies outside.
  expect(result.failure?.detail).not.toContain(SECRET_TEXT);
}

describe('lexical confinement', () => {
  it.each([
    ['/etc/passwd', 'tool.permission.path_escape'],
    ['../outside/secret.txt', 'tool.permission.path_escape'],
    ['a/../../outside/secret.txt', 'tool.permission.path_escape'],
    ['docs/../docs/a.txt', 'tool.permission.path_escape'],
    ['..', 'tool.permission.path_escape'],
    ['C:/Windows/win.ini', 'tool.permission.path_escape'],
    ['c:secret', 'tool.permission.path_escape'],
    ['..\\outside\\secret.txt', 'tool.permission.path_escape'],
    ['\\\\server\\share\\x', 'tool.permission.path_escape'],
    ['docs/a.txt\u0000.png', 'tool.invalid_arguments.path'],
    ['docs/\nevil', 'tool.invalid_arguments.path'],
  ])('%j is refused with %s by all three tools', async (p, code) => {
    for (const [tool, args] of [
      [readText, { path: p }],
      [writeText, { path: p, text: 'x' }],
      [list, { path: p }],
    ] as const) {
      const { result, marks } = await run(tool, args);
      expectFailure(result, code);
      expect(marks).toBe(0);
    }
  });

  it('accepts "." and redundant slashes as the same paths', () => {
    expect(parseWorkspacePath('./docs//a.txt')).toEqual({ ok: true, value: ['docs', 'a.txt'] });
    expect(parseWorkspacePath('.')).toEqual({ ok: true, value: [] });
    expect(parseWorkspacePath('docs/')).toEqual({ ok: true, value: ['docs'] });
  });
});

describe('symbolic links', () => {
  it('refuses a link to /etc, and a path through it', async () => {
    symlinkSync('/etc', path.join(ws.root, 'etc-link'));
    expectFailure((await run(readText, { path: 'etc-link/hostname' })).result, 'tool.permission.path_escape');
    expectFailure((await run(list, { path: 'etc-link' })).result, 'tool.permission.path_escape');
    expectFailure((await run(writeText, { path: 'etc-link/veetbot-test', text: 'x' })).result, 'tool.permission.path_escape');
  });

  it('refuses a file link pointing outside, for reads and writes, and leaves the target alone', async () => {
    symlinkSync(ws.secret, path.join(ws.root, 'secret-link'));
    expectFailure((await run(readText, { path: 'secret-link' })).result, 'tool.permission.path_escape');
    const write = await run(writeText, { path: 'secret-link', text: 'overwritten' });
    expectFailure(write.result, 'tool.permission.path_escape');
    expect(write.marks).toBe(0);
    expect(readFileSync(ws.secret, 'utf8')).toBe(SECRET_TEXT);
  });

  it('refuses a symlinked directory (relative target) for read, list and write', async () => {
    symlinkSync('../outside', path.join(ws.root, 'outdir'));
    expectFailure((await run(readText, { path: 'outdir/secret.txt' })).result, 'tool.permission.path_escape');
    expectFailure((await run(list, { path: 'outdir' })).result, 'tool.permission.path_escape');
    expectFailure((await run(writeText, { path: 'outdir/new.txt', text: 'x' })).result, 'tool.permission.path_escape');
    expect(existsSync(path.join(ws.outside, 'new.txt'))).toBe(false);
  });

  it('refuses to write through a dangling link whose target would be outside, without marking the watermark', async () => {
    const target = path.join(ws.outside, 'created-by-escape.txt');
    symlinkSync(target, path.join(ws.root, 'dangling'));
    symlinkSync('../outside/missing-dir/x.txt', path.join(ws.root, 'dangling-relative'));
    for (const p of ['dangling', 'dangling-relative']) {
      const { result, marks } = await run(writeText, { path: p, text: 'x' });
      expectFailure(result, 'tool.permission.path_escape');
      expect(marks).toBe(0);
    }
    expect(existsSync(target)).toBe(false);
    expect(existsSync(path.join(ws.outside, 'missing-dir'))).toBe(false);
  });

  it('gives the same answer for an outside target whether or not it exists', async () => {
    symlinkSync(path.join(ws.outside, 'does-not-exist'), path.join(ws.root, 'probe-missing'));
    symlinkSync(ws.secret, path.join(ws.root, 'probe-existing'));
    const missing = (await run(readText, { path: 'probe-missing' })).result;
    const existing = (await run(readText, { path: 'probe-existing' })).result;
    expect(missing.failure?.reason_code).toBe('tool.permission.path_escape');
    expect(existing.failure?.reason_code).toBe('tool.permission.path_escape');
  });

  it('refuses a link that climbs above the root with ".." even through a detour', async () => {
    symlinkSync('..', path.join(ws.root, 'up'));
    symlinkSync('../..', path.join(ws.root, 'docs', 'upup'));
    expectFailure((await run(readText, { path: 'up/outside/secret.txt' })).result, 'tool.permission.path_escape');
    expectFailure((await run(list, { path: 'docs/upup' })).result, 'tool.permission.path_escape');
  });

  it('follows links that stay inside the workspace', async () => {
    symlinkSync('docs', path.join(ws.root, 'docs-link'));
    symlinkSync(path.join(ws.root, 'docs', 'a.txt'), path.join(ws.root, 'abs-link'));
    symlinkSync('..', path.join(ws.root, 'docs', 'up'));
    for (const p of ['docs-link/a.txt', 'abs-link', 'docs/up/docs/a.txt']) {
      const { result } = await run(readText, { path: p });
      expect(result.ok, p).toBe(true);
      expect(result.content).toEqual([{ type: 'text', text: 'inside' }]);
    }
    // A write through an inside link lands on the link's target, and the link survives.
    const write = await run(writeText, { path: 'abs-link', text: 'rewritten' });
    expect(write.result.ok).toBe(true);
    expect(readFileSync(path.join(ws.root, 'docs', 'a.txt'), 'utf8')).toBe('rewritten');
    expect((await run(list, { path: '.' })).result.structured).toMatchObject({
      entries: expect.arrayContaining([{ name: 'abs-link', type: 'symlink' }]),
    });
  });

  it('serves only folders in the provider layout, never a folder reached another way', async () => {
    // docs/adr/0058: the helper opens `<tenant-hash>/<run-id>` below the workspaces folder by
    // descriptor; a root named any other way (a link to the workspace, another folder) gets no files.
    const linkedRoot = path.join(ws.base, 'root-link');
    symlinkSync(ws.root, linkedRoot);
    expectFailure((await run(readText, { path: 'docs/a.txt' }, linkedRoot)).result, 'tool.internal.workspace_unavailable');
    expectFailure((await run(readText, { path: 'secret.txt' }, ws.outside)).result, 'tool.internal.workspace_unavailable');
  });

  it('reports a link loop as a typed failure', async () => {
    symlinkSync('loop-b', path.join(ws.root, 'loop-a'));
    symlinkSync('loop-a', path.join(ws.root, 'loop-b'));
    expectFailure((await run(readText, { path: 'loop-a' })).result, 'tool.invalid_arguments.symlink_loop');
  });
});

describe('missing targets and unusable contexts', () => {
  it('reports a missing file as tool.not_found.path', async () => {
    expectFailure((await run(readText, { path: 'docs/missing.txt' })).result, 'tool.not_found.path');
    expectFailure((await run(list, { path: 'no-such-dir' })).result, 'tool.not_found.path');
    expectFailure((await run(readText, { path: 'docs/a.txt/below-a-file' })).result, 'tool.not_found.path');
  });

  it('fails with tool.internal.no_workspace when the context has none', async () => {
    for (const [tool, args] of [
      [readText, { path: 'docs/a.txt' }],
      [writeText, { path: 'x.txt', text: 'x' }],
      [list, {}],
    ] as const) {
      const { result, marks } = await run(tool, args, null);
      expectFailure(result, 'tool.internal.no_workspace');
      expect(marks).toBe(0);
    }
  });

  it('refuses a FIFO promptly instead of blocking on it', async () => {
    execFileSync('mkfifo', [path.join(ws.root, 'pipe')]);
    const started = Date.now();
    expectFailure((await run(readText, { path: 'pipe' })).result, 'tool.invalid_arguments.not_a_file');
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('refuses to read a directory or list a file', async () => {
    expectFailure((await run(readText, { path: 'docs' })).result, 'tool.invalid_arguments.not_a_file');
    expectFailure((await run(list, { path: 'docs/a.txt' })).result, 'tool.invalid_arguments.not_a_directory');
    expectFailure((await run(writeText, { path: 'docs', text: 'x' })).result, 'tool.invalid_arguments.is_directory');
  });
});
