import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, lstat, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { logMessages } from '@veetbot/telemetry';
import { afterAll, describe, expect, it } from 'vitest';

// docs/adr/0054: nothing in the data folder is writable by group or other, and no file is
// readable by them, whatever umask the process inherited; an older folder is repaired at start.

const REPO = fileURLToPath(new URL('../../..', import.meta.url));
const MAIN = 'apps/api/src/main.ts';
const EXCLUDED = new Set(['workspaces', 'sandbox', 'bridge']);

const children: ChildProcess[] = [];
const folders: string[] = [];

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
  for (const dir of folders) await rm(dir, { recursive: true, force: true });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Every entry under `root` (links not followed), the three excluded top folders left out. */
async function entries(root: string): Promise<{ path: string; mode: number; kind: 'folder' | 'file' | 'other' }[]> {
  const found: { path: string; mode: number; kind: 'folder' | 'file' | 'other' }[] = [];
  const walk = async (path: string, top: boolean): Promise<void> => {
    const stats = await lstat(path);
    const kind = stats.isDirectory() ? 'folder' : stats.isFile() ? 'file' : 'other';
    found.push({ path: relative(root, path) || '.', mode: stats.mode & 0o7777, kind });
    if (kind !== 'folder') return;
    for (const name of await readdir(path)) if (!(top && EXCLUDED.has(name))) await walk(join(path, name), false);
  };
  await walk(root, true);
  return found;
}

describe('the data folder under umask 0 (docs/adr/0054)', () => {
  it('is private after a start with umask 0: no group/other write anywhere, no group/other read on files; an old 0666 file is repaired, a link and workspaces/ are not touched', async () => {
    const base = await mkdtemp(join(tmpdir(), 'veetbot-modes-'));
    folders.push(base);
    await chmod(base, 0o711); // the sandbox's host user must reach the data folder (docs/adr/0037)
    const dataDir = join(base, 'data');
    await mkdir(dataDir);
    // The folder an attacker found: traversable, with world-writable files from an older start.
    await chmod(dataDir, 0o711);
    await writeFile(join(dataDir, 'operator.json'), JSON.stringify({ mcp: { servers: [] } }));
    await chmod(join(dataDir, 'operator.json'), 0o666);
    await mkdir(join(dataDir, 'blobs', 'old'), { recursive: true });
    await chmod(join(dataDir, 'blobs'), 0o777);
    await chmod(join(dataDir, 'blobs', 'old'), 0o777);
    await writeFile(join(dataDir, 'blobs', 'old', 'stale.bin'), 'x');
    await chmod(join(dataDir, 'blobs', 'old', 'stale.bin'), 0o666);
    // A link inside the folder to a file outside it: the repair never changes what it points at.
    const outside = join(base, 'outside.txt');
    await writeFile(outside, 'not ours to change');
    await chmod(outside, 0o666);
    await symlink(outside, join(dataDir, 'link-out'));
    // workspaces/ belongs to the sandbox's user (another design): left exactly as it is.
    await mkdir(join(dataDir, 'workspaces'), { recursive: true });
    await writeFile(join(dataDir, 'workspaces', 'tenant-file'), 'x');
    await chmod(join(dataDir, 'workspaces', 'tenant-file'), 0o666);

    const port = await freePort();
    const env: Record<string, string | undefined> = {
      ...process.env,
      VEETBOT_DATA_DIR: dataDir,
      VEETBOT_PORT: String(port),
      VEETBOT_DEMO_API_KEY: 'vbk_test_modes_key_0123456789abcdef',
    };
    delete env.DATABASE_URL;
    // The umask the service manager might hand down: 0.
    const child = spawn('/bin/sh', ['-c', `umask 0 && exec "${process.execPath}" --import tsx ${MAIN}`], {
      cwd: REPO,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    // The process logs JSON lines (docs/adr/0069): what it said is their messages.
    let raw = '';
    let output = '';
    const said = (chunk: Buffer) => {
      raw += chunk.toString('utf8');
      output = logMessages(raw);
    };
    child.stdout!.on('data', said);
    child.stderr!.on('data', said);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      const check = setInterval(() => {
        if (/^veetbot listening on /m.test(output)) {
          clearInterval(check);
          resolve();
        } else if (child.exitCode !== null) {
          clearInterval(check);
          reject(new Error(`exited ${child.exitCode}:\n${output}`));
        }
      }, 100);
    });
    // The process wrote something after start (a session: its rows in PGlite) before we look.
    const session = await fetch(`http://127.0.0.1:${port}/v1/sessions`, {
      method: 'POST',
      headers: { Authorization: 'Bearer vbk_test_modes_key_0123456789abcdef', 'Content-Type': 'application/json' },
      body: JSON.stringify({ agent_id: 'modes' }),
    });
    expect(session.status).toBe(201);
    expect(output).toMatch(/^ {2}data folder: \d+ entries made private/m);
    // The sandbox sets the modes it means (0711, 0644) whatever the umask: it still starts here
    // (where bubblewrap is missing, the only reason allowed is that).
    expect(output).toMatch(/^ {2}sandbox: (bubblewrap ready|unavailable, .*bubblewrap \(bwrap\) is not installed)/m);

    const all = await entries(dataDir);
    const pglite = all.filter((e) => e.path.startsWith('pglite/') && e.kind === 'file');
    expect(pglite.length).toBeGreaterThan(100); // the database's own files are among those checked
    const writable = all.filter((e) => e.kind !== 'other' && (e.mode & 0o022) !== 0);
    expect(writable).toEqual([]);
    const readable = all.filter((e) => e.kind === 'file' && (e.mode & 0o044) !== 0);
    expect(readable).toEqual([]);
    // The repaired ones, exactly: write (and read on files) removed, the rest kept.
    const mode = (path: string) => all.find((e) => e.path === path)?.mode;
    expect(mode('operator.json')).toBe(0o600);
    expect(mode('blobs')).toBe(0o755);
    expect(mode('blobs/old')).toBe(0o755);
    expect(mode('blobs/old/stale.bin')).toBe(0o600);
    expect(mode('.')).toBe(0o711);
    expect((await lstat(join(dataDir, 'link-out'))).isSymbolicLink()).toBe(true);
    expect((await lstat(outside)).mode & 0o777).toBe(0o666);
    expect((await lstat(join(dataDir, 'workspaces', 'tenant-file'))).mode & 0o777).toBe(0o666);

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});
