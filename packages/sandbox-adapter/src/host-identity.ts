import { chmodSync, lchownSync, lstatSync, readdirSync } from 'node:fs';
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
 * Hand the workspace tree to the sandbox's host user: lchown every entry (a symlink is
 * changed itself, never followed, so a link planted in the workspace cannot hand over a file
 * outside it), and let the user traverse the folders between `workspaceRoot` and it.
 */
export function handOver(workspace: string, identity: HostIdentity, workspaceRoot: string | undefined): void {
  const walk = (entry: string): void => {
    const stats = lstatSync(entry);
    if (stats.uid !== identity.uid || stats.gid !== identity.gid) lchownSync(entry, identity.uid, identity.gid);
    if (stats.isDirectory()) for (const name of readdirSync(entry)) walk(path.join(entry, name));
  };
  walk(workspace);
  if (workspaceRoot === undefined) return;
  const root = path.resolve(workspaceRoot);
  let folder = path.dirname(workspace);
  while (folder.startsWith(`${root}${path.sep}`) || folder === root) {
    const mode = lstatSync(folder).mode & 0o7777;
    // Search only (x), never list (r): another run's id is not discoverable from here.
    if ((mode & 0o001) === 0) chmodSync(folder, mode | 0o001);
    if (folder === root) break;
    folder = path.dirname(folder);
  }
}
