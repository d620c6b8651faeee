import { createHash, randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WorkspaceFiles } from '@veetbot/ports';
import { FolderWorkspaceProvider } from '../src/index';
import { WorkspaceError } from '../src/errors';

let base: string;
beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'workspaces-'));
});
afterEach(async () => {
  await rm(base, { recursive: true, force: true });
});

/** The handle is the composition's (the confined helper); here a marker per folder, and who was opened. */
const prepared: string[] = [];
const providerAt = (root: string) =>
  new FolderWorkspaceProvider({
    root,
    open: (folder) => {
      prepared.push(folder);
      return { root: folder, files: { folder } as unknown as WorkspaceFiles };
    },
  });

const hashOf = (tenant: string) => createHash('sha256').update(tenant, 'utf8').digest('hex').slice(0, 32);
const codeOf = (code: string) => (e: unknown) => WorkspaceError.isInstance(e) && e.code === code;

describe('FolderWorkspaceProvider', () => {
  it('gives each run <root>/<sha256(tenant)[:32]>/<run_id>, created lazily with mode 0700', async () => {
    const root = join(base, 'workspaces');
    const provider = providerAt(root);
    const runId = randomUUID();
    // Lazily: constructing the provider creates nothing.
    await expect(stat(root)).rejects.toMatchObject({ code: 'ENOENT' });

    const handle = await provider.forRun('tenant/one', runId);
    expect(handle.root).toBe(join(root, hashOf('tenant/one'), runId));
    // The run folder is handed over (a root worker's sandbox user) and gets its files port.
    expect(prepared).toContain(handle.root);
    expect(handle.files).toEqual({ folder: handle.root });
    for (const folder of [root, join(root, hashOf('tenant/one')), handle.root]) {
      const entry = await stat(folder);
      expect(entry.isDirectory()).toBe(true);
      expect(entry.mode & 0o777).toBe(0o700);
    }
    // Again: the same folder, and what a tool wrote there is still there.
    await writeFile(join(handle.root, 'notes.txt'), 'kept');
    expect(await provider.forRun('tenant/one', runId)).toEqual(handle);
    expect(await readdir(handle.root)).toEqual(['notes.txt']);
  });

  it('keeps tenants and runs apart', async () => {
    const provider = providerAt(base);
    const runId = randomUUID();
    const a = await provider.forRun('tenant-a', runId);
    const b = await provider.forRun('tenant-b', runId);
    const c = await provider.forRun('tenant-a', randomUUID());
    expect(new Set([a.root, b.root, c.root]).size).toBe(3);
    expect(a.root.startsWith(join(base, hashOf('tenant-a')))).toBe(true);
    expect(b.root.startsWith(join(base, hashOf('tenant-b')))).toBe(true);
  });

  it('refuses run ids that are not UUIDs and empty tenants, before touching the disk', async () => {
    const provider = providerAt(base);
    for (const runId of ['../escape', '', 'run-1', `${randomUUID()}/..`]) {
      await expect(provider.forRun('tenant', runId)).rejects.toSatisfy(codeOf('workspace.invalid_run_id'));
    }
    await expect(provider.forRun('', randomUUID())).rejects.toSatisfy(codeOf('workspace.invalid_tenant'));
    expect(await readdir(base)).toEqual([]);
    expect(() => providerAt('')).toThrow(WorkspaceError);
  });

  it('refuses a workspace path that is a symlink or a file rather than a folder', async () => {
    const provider = providerAt(base);
    const linked = randomUUID();
    const elsewhere = join(base, 'elsewhere');
    await mkdir(elsewhere);
    await mkdir(join(base, hashOf('tenant')), { mode: 0o700 });
    await symlink(elsewhere, join(base, hashOf('tenant'), linked));
    await expect(provider.forRun('tenant', linked)).rejects.toSatisfy(codeOf('workspace.io'));
    const file = randomUUID();
    await writeFile(join(base, hashOf('tenant'), file), 'not a folder');
    await expect(provider.forRun('tenant', file)).rejects.toSatisfy(codeOf('workspace.io'));
  });
});
