import { chmodSync, lchownSync, lstatSync } from 'node:fs';
import path from 'node:path';

/** The host uid/gid a sandbox runs as when the worker is root: nobody, unless configured. */
export const DEFAULT_HOST_ID = 65534;

export interface HostIdentity {
  readonly uid: number;
  readonly gid: number;
}

/**
 * docs/adr/0037: a worker running as root never starts bwrap as root. The sandbox user is
 * mapped to a host user; mapped to root it would be exempt from RLIMIT_NPROC (the kernel
 * exempts the root user) and would appear to own every root-owned file it can see. So bwrap
 * runs as an unprivileged host uid, and the only things that uid owns are workspaces it was
 * handed. A non-root worker runs bwrap as itself (it cannot switch).
 */
export function hostIdentity(configured: Partial<HostIdentity>): HostIdentity | null {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  return { uid: configured.uid ?? DEFAULT_HOST_ID, gid: configured.gid ?? DEFAULT_HOST_ID };
}

/**
 * Hand a run's workspace folder to the sandbox's host user (docs/adr/0058): the folder ITSELF is
 * lchown'ed (never followed) and the folders between `workspaceRoot` and it get search
 * permission only. Nothing inside is walked: whatever is inside was made by the program or by
 * the workspace helper, both as that user. Walking a tree the tenant writes, with the worker's
 * authority, is exactly what a swapped folder turns against the host.
 */
export function handOver(workspace: string, identity: HostIdentity, workspaceRoot: string | undefined): void {
  const stats = lstatSync(workspace);
  if (!stats.isDirectory()) throw new Error('the run workspace is not a plain folder');
  if (stats.uid !== identity.uid || stats.gid !== identity.gid) lchownSync(workspace, identity.uid, identity.gid);
  if (workspaceRoot === undefined) return;
  const root = path.resolve(workspaceRoot);
  for (let folder = path.dirname(workspace); folder.startsWith(`${root}${path.sep}`) || folder === root; folder = path.dirname(folder)) {
    searchable(folder);
    if (folder === root) break;
  }
}

/** Add search permission for others (o+x), never read or write: another run's name stays undiscoverable. */
export function searchable(folder: string): void {
  const mode = lstatSync(folder).mode & 0o7777;
  if ((mode & 0o001) === 0) chmodSync(folder, mode | 0o001);
}

/**
 * The first folder on the way to `target` that the host user cannot search (no o+x, not its
 * own), or null. bwrap resolves bind sources by path as that user, so this is what a refused
 * probe means; the operator is told which folder, and decides (docs/adr/0037).
 */
export function untraversable(target: string, identity: HostIdentity): string | null {
  const folders: string[] = [];
  for (let folder = path.resolve(target); ; folder = path.dirname(folder)) {
    folders.unshift(folder);
    if (path.dirname(folder) === folder) break;
  }
  for (const folder of folders) {
    let stats: ReturnType<typeof lstatSync>;
    try {
      stats = lstatSync(folder);
    } catch {
      return null; // not created yet: mkdir will say more
    }
    if (!stats.isDirectory()) continue;
    const searchable = stats.uid === identity.uid ? (stats.mode & 0o100) !== 0 : (stats.mode & 0o001) !== 0;
    if (!searchable) return folder;
  }
  return null;
}
