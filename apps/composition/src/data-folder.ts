import { closeSync, constants, fchmodSync, fstatSync, lstatSync, openSync, readdirSync, realpathSync, type Stats } from 'node:fs';
import { join } from 'node:path';

/**
 * The umask of every veetbot process (docs/adr/0054): whatever the shell or the service manager
 * handed down, what this process creates is its user's alone. PGlite's files take their mode from
 * the umask (Emscripten's NODEFS creates them 0666 & ~umask), and so do blobs, secrets.key, the
 * outbox and operator.json. The sandbox and the bridge set the modes they mean explicitly.
 */
export const PRIVATE_UMASK = 0o077;

/**
 * Top-level folders of the data folder the repair leaves alone: tenant programs write there as
 * another host user, and the sandbox adapter owns their modes (docs/adr/0037, 0038, 0039).
 */
export const REPAIR_EXCLUDED: ReadonlySet<string> = new Set(['workspaces', 'sandbox', 'bridge']);

/** Folders lose group/other write; files lose group/other read and write. */
const FOLDER_BITS = 0o022;
const FILE_BITS = 0o066;

export interface DataFolderRepair {
  /** Entries whose mode was narrowed. */
  readonly repaired: number;
  /** Entries that could not be narrowed (not ours, gone, unreadable), by path. */
  readonly failed: readonly string[];
}

/**
 * Set this process's umask to PRIVATE_UMASK (main threads only: a worker thread cannot).
 * Call before anything is created.
 */
export function usePrivateUmask(): void {
  process.umask(PRIVATE_UMASK);
}

/**
 * Narrow the modes of an existing data folder (docs/adr/0054): a folder made by an older version,
 * or under a permissive umask, may hold world-writable database files. Walked without following
 * symbolic links — a link is skipped, never changed and never entered, so a link planted in the
 * folder cannot aim a chmod elsewhere — and each change is made on a descriptor opened with
 * O_NOFOLLOW and checked to be the entry that was inspected (same device and inode). A folder is
 * narrowed before it is listed, so nobody else can add entries while it is walked.
 * `exclude`'s folders at the top (default REPAIR_EXCLUDED) are left alone.
 *
 * PGlite needs it after every open too: the database it unpacks on its first open is written
 * with explicit chmods to 0666 (the umask does not apply); what it creates later follows the umask.
 */
export function repairDataFolder(dataDir: string, exclude: ReadonlySet<string> = REPAIR_EXCLUDED): DataFolderRepair {
  let repaired = 0;
  const failed: string[] = [];
  // The operator's path may itself be a link (their choice): the folder it names is repaired.
  let root: string;
  try {
    root = realpathSync(dataDir);
  } catch {
    return { repaired, failed };
  }
  const uid = process.getuid?.() ?? -1;
  const visit = (path: string, top: boolean): void => {
    let stats: Stats;
    try {
      stats = lstatSync(path);
    } catch {
      return; // gone since it was listed
    }
    const folder = stats.isDirectory();
    if (!folder && !stats.isFile()) return; // links, sockets, fifos: never changed
    const bits = folder ? FOLDER_BITS : FILE_BITS;
    if ((stats.mode & bits) !== 0) {
      // Not this user's, or a file with another name elsewhere (a hard link made while the
      // folder was open to others can name a file outside it): reported, never changed.
      if (stats.uid !== uid || (!folder && stats.nlink > 1)) failed.push(path);
      else if (narrow(path, stats, folder, stats.mode & 0o7777 & ~bits)) repaired++;
      else failed.push(path);
    }
    if (!folder) return;
    let names: string[];
    try {
      names = readdirSync(path);
    } catch {
      failed.push(path);
      return;
    }
    for (const name of names) {
      if (top && exclude.has(name)) continue;
      visit(join(path, name), false);
    }
  };
  visit(root, true);
  return { repaired, failed };
}

function narrow(path: string, seen: Stats, folder: boolean, mode: number): boolean {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | (folder ? constants.O_DIRECTORY : 0));
  } catch {
    return false;
  }
  try {
    const opened = fstatSync(fd);
    // Replaced between the lstat and the open: not the entry inspected, left alone.
    if (opened.dev !== seen.dev || opened.ino !== seen.ino) return false;
    fchmodSync(fd, mode);
    return true;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}
