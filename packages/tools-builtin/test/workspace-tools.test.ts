import { createHash } from 'node:crypto';
import { chmodSync, readdirSync, readFileSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ToolResult } from '@veetbot/domain';
import type { Tool } from '@veetbot/ports';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorkspaceListTool, LIST_MAX_ENTRIES } from '../src/workspace/workspace-list';
import { createWorkspaceReadTextTool } from '../src/workspace/workspace-read-text';
import { createWorkspaceWriteTextTool } from '../src/workspace/workspace-write-text';
import { createFakeContext, type FakeContextOptions } from './fake-context';
import { createTempWorkspace, type TempWorkspace } from './temp-workspace';

const readText = createWorkspaceReadTextTool();
const writeText = createWorkspaceWriteTextTool();
const list = createWorkspaceListTool();

let ws: TempWorkspace;
beforeEach(() => {
  ws = createTempWorkspace();
});
afterEach(() => ws.cleanup());

async function run(tool: Tool, args: Record<string, unknown>, options: FakeContextOptions = {}) {
  const fake = createFakeContext({ workspaceRoot: ws.root, ...options });
  const result = ToolResult.parse(await tool.execute(args, fake.context));
  return { result, marks: fake.markEffectSentCalls() };
}

const textOf = (result: ToolResult): string => {
  const part = result.content[0];
  if (part?.type !== 'text') throw new Error('expected a text part');
  return part.text;
};

describe('write, read, list round trip in a real folder', () => {
  it('writes a file (creating parents), reads it back and lists it', async () => {
    const text = 'Hello, wörld ✓\nline two\n';
    const write = await run(writeText, { path: 'notes/2025/today.md', text });
    expect(write.result.ok).toBe(true);
    expect(write.marks).toBe(1);
    const bytes = Buffer.byteLength(text);
    expect(write.result.structured).toEqual({
      path: 'notes/2025/today.md',
      bytes_written: bytes,
      created: true,
      unchanged: false,
      sha256: createHash('sha256').update(text).digest('hex'),
    });
    expect(readFileSync(path.join(ws.root, 'notes/2025/today.md'), 'utf8')).toBe(text);

    const read = await run(readText, { path: 'notes/2025/today.md' });
    expect(textOf(read.result)).toBe(text);
    expect(read.result.structured).toEqual({ path: 'notes/2025/today.md', bytes_read: bytes, total_bytes: bytes, truncated: false });
    expect(read.marks).toBe(0);

    const listing = await run(list, { path: 'notes/2025' });
    expect(listing.result.structured).toEqual({
      path: 'notes/2025',
      entries: [{ name: 'today.md', type: 'file', size: bytes }],
      truncated: false,
    });
    expect(textOf(listing.result)).toBe(`notes/2025: 1 entry\ntoday.md (${bytes} bytes)`);
    const rootListing = await run(list, {});
    expect(rootListing.result.structured).toMatchObject({ path: '.', entries: [{ name: 'notes', type: 'directory' }] });
  });

  it('overwrites atomically, leaves no temporary files, and keeps the file mode', async () => {
    await run(writeText, { path: 'config.txt', text: 'one' });
    chmodSync(path.join(ws.root, 'config.txt'), 0o600);
    const second = await run(writeText, { path: 'config.txt', text: 'two' });
    expect(second.result.structured).toMatchObject({ created: false, unchanged: false, bytes_written: 3 });
    expect(readFileSync(path.join(ws.root, 'config.txt'), 'utf8')).toBe('two');
    expect(statSync(path.join(ws.root, 'config.txt')).mode & 0o777).toBe(0o600);
    expect(readdirSync(ws.root)).toEqual(['config.txt']);
  });

  it('is idempotent: the same path and text twice leave the same state', async () => {
    const first = await run(writeText, { path: 'a.txt', text: 'same' });
    const before = readdirSync(ws.root);
    const second = await run(writeText, { path: 'a.txt', text: 'same' });
    expect(second.result.ok).toBe(true);
    expect(readdirSync(ws.root)).toEqual(before);
    expect(readFileSync(path.join(ws.root, 'a.txt'), 'utf8')).toBe('same');
    expect((second.result.structured as { sha256: string }).sha256).toBe((first.result.structured as { sha256: string }).sha256);
  });

  it('mode "create" creates, accepts a replay of the same text without writing, and refuses different text', async () => {
    const created = await run(writeText, { path: 'new.txt', text: 'v1', mode: 'create' });
    expect(created.result.structured).toMatchObject({ created: true, unchanged: false });
    expect(created.marks).toBe(1);

    const replay = await run(writeText, { path: 'new.txt', text: 'v1', mode: 'create' });
    expect(replay.result.structured).toMatchObject({ created: false, unchanged: true, bytes_written: 0 });
    expect(replay.marks).toBe(0);

    const conflict = await run(writeText, { path: 'new.txt', text: 'v2', mode: 'create' });
    expect(conflict.result.failure?.reason_code).toBe('tool.invalid_arguments.already_exists');
    expect(conflict.marks).toBe(0);
    expect(readFileSync(path.join(ws.root, 'new.txt'), 'utf8')).toBe('v1');
    expect(readdirSync(ws.root)).toEqual(['new.txt']);
  });

  it('a replayed create against a huge existing file reads it bounded: already_exists, never the whole file (docs/adr/0025)', async () => {
    // Sparse: 3 GiB on paper, nothing on disk. readFile refused it (over 2 GiB), and below
    // that would have loaded all of it to compare with two bytes.
    const huge = path.join(ws.root, 'huge.log');
    writeFileSync(huge, '');
    truncateSync(huge, 3 * 1024 ** 3);
    const conflict = await run(writeText, { path: 'huge.log', text: 'v2', mode: 'create' });
    expect(conflict.result.failure?.reason_code).toBe('tool.invalid_arguments.already_exists');
    expect(conflict.marks).toBe(0);
    expect(statSync(huge).size).toBe(3 * 1024 ** 3);
  });

  it('list keeps only the first entries in code-unit order, read entry by entry: a longer directory is truncated, the order is exact', async () => {
    const names = Array.from(
      { length: LIST_MAX_ENTRIES + 300 },
      (_, i) => `f${String((i * 7919) % (LIST_MAX_ENTRIES + 300)).padStart(5, '0')}`,
    );
    for (const name of names) writeFileSync(path.join(ws.root, name), '');
    const listing = await run(list, { path: '.' }, { maximumOutputBytes: 262_144 });
    const entries = (listing.result.structured as { entries: { name: string }[]; truncated: boolean }).entries.map((e) => e.name);
    expect(entries).toEqual([...names].sort().slice(0, entries.length));
    expect(entries.length).toBe(LIST_MAX_ENTRIES);
    expect((listing.result.structured as { truncated: boolean }).truncated).toBe(true);
  });

  it('read_text reads a huge file bounded: at most the output limit, truncated', async () => {
    const huge = path.join(ws.root, 'huge.txt');
    writeFileSync(huge, 'head\n');
    truncateSync(huge, 3 * 1024 ** 3);
    const read = await run(readText, { path: 'huge.txt', max_bytes: 16 });
    expect(read.result.structured).toEqual({ path: 'huge.txt', bytes_read: 16, total_bytes: 3 * 1024 ** 3, truncated: true });
  });

  it('does not write when the run is already cancelled', async () => {
    const controller = new AbortController();
    controller.abort();
    const { result, marks } = await run(writeText, { path: 'x.txt', text: 'x' }, { signal: controller.signal });
    expect(result.failure?.reason_code).toBe('tool.internal.cancelled');
    expect(marks).toBe(0);
    expect(readdirSync(ws.root)).toEqual([]);
  });
});

describe('workspace.read_text limits', () => {
  it('reads at most max_bytes and reports truncation', async () => {
    writeFileSync(path.join(ws.root, 'ten.txt'), '0123456789');
    const { result } = await run(readText, { path: 'ten.txt', max_bytes: 4 });
    expect(textOf(result)).toBe('0123');
    expect(result.structured).toEqual({ path: 'ten.txt', bytes_read: 4, total_bytes: 10, truncated: true });
  });

  it('never reads more than the context output limit, whatever max_bytes says', async () => {
    writeFileSync(path.join(ws.root, 'ten.txt'), '0123456789');
    const { result } = await run(readText, { path: 'ten.txt', max_bytes: 100 }, { maximumOutputBytes: 6 });
    expect(textOf(result)).toBe('012345');
    expect(result.structured).toMatchObject({ bytes_read: 6, truncated: true });
  });

  it('cuts a truncated read at a character boundary', async () => {
    writeFileSync(path.join(ws.root, 'accent.txt'), 'hé€llo');
    const { result } = await run(readText, { path: 'accent.txt', max_bytes: 2 });
    expect(textOf(result)).toBe('h');
    expect(result.structured).toMatchObject({ bytes_read: 1, total_bytes: Buffer.byteLength('hé€llo'), truncated: true });
    const four = await run(readText, { path: 'accent.txt', max_bytes: 5 });
    expect(textOf(four.result)).toBe('hé');
  });

  it('refuses bytes that are not UTF-8', async () => {
    writeFileSync(path.join(ws.root, 'blob.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0xff, 0xfe]));
    const { result } = await run(readText, { path: 'blob.bin' });
    expect(result.failure?.reason_code).toBe('tool.invalid_arguments.not_utf8');
  });

  it('reads an empty file as empty text', async () => {
    writeFileSync(path.join(ws.root, 'empty.txt'), '');
    const { result } = await run(readText, { path: 'empty.txt' });
    expect(result.ok).toBe(true);
    expect(textOf(result)).toBe('');
    expect(result.structured).toMatchObject({ bytes_read: 0, total_bytes: 0, truncated: false });
  });
});

describe('workspace.list', () => {
  it('sorts by code unit, types every entry and does not follow links', async () => {
    writeFileSync(path.join(ws.root, 'b.txt'), 'bb');
    writeFileSync(path.join(ws.root, 'B.txt'), 'B');
    writeFileSync(path.join(ws.root, 'a.txt'), '');
    symlinkSync(ws.secret, path.join(ws.root, 'link'));
    const { result } = await run(list, { path: '.' });
    expect(result.structured).toEqual({
      path: '.',
      entries: [
        { name: 'B.txt', type: 'file', size: 1 },
        { name: 'a.txt', type: 'file', size: 0 },
        { name: 'b.txt', type: 'file', size: 2 },
        { name: 'link', type: 'symlink' },
      ],
      truncated: false,
    });
    expect(textOf(result)).toBe('.: 4 entries\nB.txt (1 bytes)\na.txt (0 bytes)\nb.txt (2 bytes)\nlink@');
  });

  it('stops within the output limit and says so', async () => {
    for (let i = 0; i < 60; i += 1) writeFileSync(path.join(ws.root, `file-${String(i).padStart(2, '0')}.txt`), 'x');
    const { result } = await run(list, {}, { maximumOutputBytes: 1_024 });
    const structured = result.structured as { entries: { name: string }[]; truncated: boolean };
    expect(structured.truncated).toBe(true);
    expect(structured.entries.length).toBeGreaterThan(0);
    expect(structured.entries.length).toBeLessThan(60);
    expect(structured.entries[0]?.name).toBe('file-00.txt');
    const size = Buffer.byteLength(JSON.stringify(result.structured)) + Buffer.byteLength(textOf(result));
    expect(size).toBeLessThanOrEqual(1_024);
  });
});
