import { chmod, link, lstat, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { repairDataFolder } from '../src/data-folder';

// docs/adr/0054: the repair itself, on a folder built to attack it (the whole start under umask
// 0 is apps/api/test/data-folder-modes.test.ts).

const folders: string[] = [];
afterAll(async () => {
  for (const folder of folders) await rm(folder, { recursive: true, force: true });
});

const modeOf = async (path: string) => (await lstat(path)).mode & 0o7777;

describe('repairDataFolder', () => {
  it('narrows folders and files, keeps execute and owner bits, and never changes what a link, a hard link or an excluded folder reaches', async () => {
    const base = await mkdtemp(join(tmpdir(), 'veetbot-repair-'));
    folders.push(base);
    const data = join(base, 'data');
    const outside = join(base, 'outside');
    await mkdir(join(data, 'pglite', 'base'), { recursive: true });
    await mkdir(outside);
    const files: [string, number, number][] = [
      [join(data, 'pglite', 'base', '1259'), 0o666, 0o600],
      [join(data, 'pglite', 'PG_VERSION'), 0o644, 0o600],
      [join(data, 'run.sh'), 0o777, 0o711],
      [join(data, 'secrets.key'), 0o600, 0o600],
    ];
    for (const [path, mode] of files) {
      await writeFile(path, 'x');
      await chmod(path, mode);
    }
    await chmod(join(data, 'pglite', 'base'), 0o777);
    await chmod(join(data, 'pglite'), 0o775);
    await chmod(data, 0o733);
    // A link to a folder outside (never entered), a link to a file outside (never changed).
    await writeFile(join(outside, 'victim'), 'x');
    await chmod(join(outside, 'victim'), 0o666);
    await chmod(outside, 0o777);
    await symlink(outside, join(data, 'folder-link'));
    await symlink(join(outside, 'victim'), join(data, 'file-link'));
    // A hard link to a file outside: a second name, left alone (and reported).
    await writeFile(join(outside, 'linked'), 'x');
    await chmod(join(outside, 'linked'), 0o666);
    await link(join(outside, 'linked'), join(data, 'hard-link'));
    // The three excluded folders, at the top only.
    for (const name of ['workspaces', 'sandbox', 'bridge']) {
      await mkdir(join(data, name, 'inner'), { recursive: true });
      await chmod(join(data, name, 'inner'), 0o777);
      await writeFile(join(data, name, 'inner', 'f'), 'x');
      await chmod(join(data, name, 'inner', 'f'), 0o666);
    }
    await mkdir(join(data, 'blobs', 'workspaces'), { recursive: true });
    await chmod(join(data, 'blobs', 'workspaces'), 0o777);

    const report = repairDataFolder(data);

    for (const [path, , expected] of files) expect((await modeOf(path)).toString(8), path).toBe(expected.toString(8));
    expect((await modeOf(data)).toString(8)).toBe('711');
    expect((await modeOf(join(data, 'pglite'))).toString(8)).toBe('755');
    expect((await modeOf(join(data, 'pglite', 'base'))).toString(8)).toBe('755');
    expect((await modeOf(join(data, 'blobs', 'workspaces'))).toString(8)).toBe('755'); // only the top one is excluded
    expect((await modeOf(outside)).toString(8)).toBe('777');
    expect((await modeOf(join(outside, 'victim'))).toString(8)).toBe('666');
    expect((await modeOf(join(outside, 'linked'))).toString(8)).toBe('666');
    for (const name of ['workspaces', 'sandbox', 'bridge']) {
      expect((await modeOf(join(data, name, 'inner'))).toString(8)).toBe('777');
      expect((await modeOf(join(data, name, 'inner', 'f'))).toString(8)).toBe('666');
    }
    expect(report.failed).toEqual([join(data, 'hard-link')]);
    expect(report.repaired).toBe(7);
    // Nothing left to do the second time.
    expect(repairDataFolder(data)).toEqual({ repaired: 0, failed: [join(data, 'hard-link')] });
  });
});
