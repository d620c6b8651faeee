// @ts-check
// The confined workspace file helper (docs/adr/0058). The host side's only hand into a tree a
// tenant can write. It runs as a separate process — inside bubblewrap where the data folder does
// not exist (only the workspaces folder is mounted, at the path given), as the sandbox's host user
// when the worker is root — and serves one JSON request per line on stdin, one answer per line on
// stdout.
//
// Every name is resolved from a directory DESCRIPTOR, one component at a time: the kernel is asked
// to open `/proc/self/fd/<dir>/<name>` with O_NOFOLLOW, which is openat(dir, name, O_NOFOLLOW)
// for a runtime (Node) that has no openat. A component swapped for a symbolic link fails with
// ELOOP and is read as a link, whose target this walk interprets itself and may only stay inside
// the run's workspace: the kernel never resolves a tenant-controlled path. Node has no openat2
// (RESOLVE_BENEATH); this walk is what stands in for it, and the helper's mount namespace is the
// second wall should the walk ever be wrong.
//
// Plain JavaScript with no imports beyond Node's own: it runs from this file as it is shipped.
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  opendirSync,
  readlinkSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { randomBytes } from 'node:crypto';

const { O_RDONLY, O_WRONLY, O_CREAT, O_EXCL, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY, O_NOCTTY } = constants;
/**
 * O_PATH (Linux's value on every architecture Node ships for, absent from fs.constants): a walk
 * descriptor needs search permission only, never read, so a folder that lets the helper's user
 * pass (o+x) but not list is walked through. With O_NOFOLLOW and O_DIRECTORY, a link is ENOTDIR.
 */
const O_PATH = 0o10000000;
const DIR_FLAGS = O_PATH | O_DIRECTORY | O_NOFOLLOW;
const FILE_FLAGS = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY;
/** Linux's SYMLOOP_MAX. */
const MAX_HOPS = 40;
/** Where the sandbox sees the workspace: an absolute link target under it names the workspace. */
const SANDBOX_WORKSPACE = '/workspace';
/** A request line longer than this ends the helper (the host never sends one). */
const MAX_LINE = 16 * 1024 * 1024;

function option(name, fallback) {
  const at = process.argv.indexOf(name);
  return at === -1 ? fallback : process.argv[at + 1];
}
const ROOT = option('--root', '/workspaces');
const MAXIMUM_BYTES = Number(option('--maximum-bytes', String(256 * 1024 * 1024)));
const MAXIMUM_ENTRIES = Number(option('--maximum-entries', '100000'));
/** Absolute link targets may also name the workspace by its host path (links made by host tools of old). */
const HOST_ROOT = option('--host-root', '');

class Refused extends Error {
  /** @param {string} code @param {string} detail */
  constructor(code, detail) {
    super(detail);
    this.code = code;
  }
}

const at = (fd, name) => `/proc/self/fd/${fd}/${name}`;
const fdPath = (fd) => `/proc/self/fd/${fd}`;

/** A single path component as the walk accepts it: never empty, `.`, `..`, or holding `/` or NUL. */
function component(name) {
  if (typeof name !== 'string' || name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0')) {
    throw new Refused('escape', 'a path component is not a plain name');
  }
  return name;
}

function errnoOf(error) {
  return error !== null && typeof error === 'object' && 'code' in error ? String(error.code) : '';
}

/** An errno as a stable code, never with the kernel's path in it. */
function fromErrno(error) {
  if (error instanceof Refused) return error;
  switch (errnoOf(error)) {
    case 'ENOENT':
      return new Refused('not_found', 'no such file or directory');
    case 'ENOTDIR':
      return new Refused('not_a_directory', 'not a directory');
    case 'EISDIR':
      return new Refused('is_directory', 'is a directory');
    case 'EEXIST':
      return new Refused('exists', 'already exists');
    case 'ELOOP':
      return new Refused('escape', 'a component became a symbolic link during the call');
    case 'ENAMETOOLONG':
      return new Refused('name_too_long', 'a name is too long');
    case 'EACCES':
    case 'EPERM':
      return new Refused('permission', 'the file system refused access');
    case 'EDQUOT':
    case 'ENOSPC':
    case 'EFBIG':
      return new Refused('disk_limit', 'no space left for the workspace');
    default:
      return new Refused('io', `file system error ${errnoOf(error) || 'unknown'}`);
  }
}

/**
 * The workspaces folder, held open for the helper's life; every walk starts from it. Given as an
 * inherited descriptor (`--root-fd`) where the helper's user could not traverse the data folder.
 */
const ROOT_FD = option('--root-fd', '');
const rootFd = ROOT_FD === '' ? openSync(ROOT, DIR_FLAGS) : Number(ROOT_FD);

/**
 * The run's workspace: `<tenant-hash>/<run-id>` below the workspaces folder, opened component by
 * component without following. Neither name is a tenant's (the provider makes them), but the
 * walk is the same everywhere.
 */
function openWorkspace(ws) {
  if (typeof ws !== 'string' || !/^[0-9a-f]{32}\/[0-9a-f-]{36}$/.test(ws)) throw new Refused('escape', 'not a workspace');
  const [tenant, run] = ws.split('/');
  const tenantFd = openSync(at(rootFd, tenant), DIR_FLAGS);
  try {
    return openSync(at(tenantFd, run), DIR_FLAGS);
  } finally {
    closeSync(tenantFd);
  }
}

/**
 * A walk position: a stack of directory descriptors from the workspace (index 0) down. `..` from
 * a link's target pops; it may never pop the workspace itself.
 */
class Walk {
  constructor(workspaceFd, ws) {
    /** An absolute link target under this host path names the workspace too (links made by host tools of old). */
    this.hostRoot = HOST_ROOT === '' ? '' : `${HOST_ROOT}/${ws}`;
    /** @type {number[]} */
    this.stack = [workspaceFd];
    this.hops = 0;
  }
  get top() {
    return /** @type {number} */ (this.stack[this.stack.length - 1]);
  }
  close() {
    for (const fd of this.stack) closeSync(fd);
    this.stack = [];
  }
  toRoot() {
    while (this.stack.length > 1) closeSync(/** @type {number} */ (this.stack.pop()));
  }
  up() {
    if (this.stack.length === 1) throw new Refused('escape', 'a symbolic link leads above the workspace');
    closeSync(/** @type {number} */ (this.stack.pop()));
  }
  /** Whether `name` in the top folder is a symbolic link now. */
  isLink(name) {
    try {
      return lstatSync(at(this.top, name)).isSymbolicLink();
    } catch {
      return false;
    }
  }
  /** The segments a link at `name` (in the top folder) stands for, with the stack moved for an absolute one. */
  expandLink(name) {
    this.hops += 1;
    if (this.hops > MAX_HOPS) throw new Refused('symlink_loop', 'too many symbolic links');
    let target;
    try {
      target = readlinkSync(at(this.top, name));
    } catch (error) {
      // EINVAL: swapped back to a plain entry meanwhile; the caller looks again.
      if (errnoOf(error) === 'EINVAL') return [name];
      throw fromErrno(error);
    }
    if (target.startsWith('/')) {
      const base = [SANDBOX_WORKSPACE, this.hostRoot].find(
        (prefix) => prefix !== '' && (target === prefix || target.startsWith(`${prefix}/`)),
      );
      if (base === undefined) throw new Refused('escape', 'a symbolic link points outside the workspace');
      this.toRoot();
      target = target.slice(base.length);
    }
    return target.split('/');
  }
  /**
   * Walk `segments`, following in-tree links, and stop before the last component: returns its
   * name with the stack's top as its folder. `create`: missing folders are made (mode 0755).
   * Absent folder without `create`: null.
   */
  parentOf(segments, create) {
    const pending = [...segments];
    for (;;) {
      while (pending.length > 0 && (pending[0] === '' || pending[0] === '.')) pending.shift();
      if (pending.length === 0) return { name: null };
      const head = /** @type {string} */ (pending.shift());
      if (head === '..') {
        this.up();
        continue;
      }
      const rest = pending.filter((s) => s !== '' && s !== '.');
      if (rest.length === 0) return { name: component(head) };
      const opened = this.enter(component(head), create);
      if (opened === null) return null;
      if (Array.isArray(opened)) pending.unshift(...opened);
    }
  }
  /** Into folder `name`: its descriptor is pushed; a link's segments returned; null when absent. */
  enter(name, create) {
    for (let attempt = 0; attempt < 3; attempt += 1) {
      try {
        this.stack.push(openSync(at(this.top, name), DIR_FLAGS));
        return true;
      } catch (error) {
        const code = errnoOf(error);
        if ((code === 'ENOTDIR' || code === 'ELOOP') && this.isLink(name)) return this.expandLink(name);
        if (code === 'ENOENT' && create) {
          try {
            mkdirSync(at(this.top, name), 0o755);
          } catch (made) {
            if (errnoOf(made) !== 'EEXIST') throw fromErrno(made);
          }
          continue;
        }
        // A file where a folder was named: nothing by that path exists (ENOTDIR is for the final name).
        if (code === 'ENOENT' || code === 'ENOTDIR') return null;
        throw fromErrno(error);
      }
    }
    throw new Refused('escape', 'a folder kept changing during the call');
  }
  /**
   * The final component, links followed: `{ name }` in the stack's top folder, the entry's lstat
   * (null when absent), or the workspace itself (`name: null`).
   */
  final(segments, create) {
    let pending = segments;
    for (;;) {
      const found = this.parentOf(pending, create);
      if (found === null) return null;
      if (found.name === null) return { name: null, stats: fstatSync(this.top) };
      let stats;
      try {
        stats = lstatSync(at(this.top, found.name));
      } catch (error) {
        if (errnoOf(error) === 'ENOENT') return { name: found.name, stats: null };
        throw fromErrno(error);
      }
      if (!stats.isSymbolicLink()) return { name: found.name, stats };
      pending = this.expandLink(found.name);
    }
  }
}

function typeOf(stats) {
  return stats.isFile() ? 'file' : stats.isDirectory() ? 'directory' : stats.isSymbolicLink() ? 'symlink' : 'other';
}

function withWalk(ws, body) {
  const walk = new Walk(openWorkspace(ws), ws);
  try {
    return body(walk);
  } finally {
    walk.close();
  }
}

/** Open the final file for reading: O_NOFOLLOW, so a swap since the lstat is ELOOP, refused. */
function openFile(walk, name) {
  const fd = openSync(at(walk.top, name), FILE_FLAGS);
  const stats = fstatSync(fd);
  if (!stats.isFile()) {
    closeSync(fd);
    throw new Refused('not_a_file', 'not a regular file');
  }
  return { fd, size: stats.size };
}

function readPrefix(fd, length) {
  const buffer = Buffer.alloc(length);
  let filled = 0;
  while (filled < length) {
    const read = readSync(fd, buffer, filled, length - filled, filled);
    if (read === 0) break;
    filled += read;
  }
  return buffer.subarray(0, filled);
}

function sameBytes(walk, name, bytes) {
  const { fd, size } = openFile(walk, name);
  try {
    if (size !== bytes.length) return false;
    const existing = readPrefix(fd, bytes.length + 1);
    return existing.length === bytes.length && Buffer.compare(existing, bytes) === 0;
  } finally {
    closeSync(fd);
  }
}

/** Deeper than this, a tree counts as over the cap: the walk holds one descriptor per level. */
const MAXIMUM_DEPTH = 256;

/**
 * Bytes (allocated blocks) and entries under the workspace, never following a link: each folder
 * is entered by descriptor with O_NOFOLLOW, so a swapped one is skipped, not followed.
 */
function usageOf(workspaceFd) {
  const tally = { bytes: 0, entries: 0 };
  const over = () => tally.entries > MAXIMUM_ENTRIES;
  const visit = (dirFd, depth) => {
    if (depth > MAXIMUM_DEPTH) {
      tally.entries = MAXIMUM_ENTRIES + 1;
      return;
    }
    const listing = opendirSync(fdPath(dirFd), { bufferSize: 256 });
    try {
      for (let entry = listing.readSync(); entry !== null && !over(); entry = listing.readSync()) {
        tally.entries += 1;
        let stats;
        try {
          stats = lstatSync(at(dirFd, entry.name));
        } catch {
          continue; // removed meanwhile
        }
        // Blocks, not length: a sparse file holds no disk; an entry costs a block of its own.
        tally.bytes += stats.blocks * 512 + 512;
        if (!stats.isDirectory()) continue;
        let child;
        try {
          child = openSync(at(dirFd, entry.name), DIR_FLAGS);
        } catch {
          continue; // swapped for a link or removed: never followed
        }
        try {
          visit(child, depth + 1);
        } finally {
          closeSync(child);
        }
      }
    } finally {
      listing.closeSync();
    }
  };
  visit(workspaceFd, 0);
  return { bytes: tally.bytes, entries: tally.entries, maximumBytes: MAXIMUM_BYTES, maximumEntries: MAXIMUM_ENTRIES };
}

const operations = {
  ping() {
    return 'pong';
  },
  stat(request) {
    return withWalk(request.ws, (walk) => {
      const found = walk.final(request.path, false);
      if (found === null || found.stats === null) return null;
      return { type: typeOf(found.stats), size: found.stats.isFile() ? found.stats.size : 0 };
    });
  },
  read(request) {
    return withWalk(request.ws, (walk) => {
      const found = walk.final(request.path, false);
      if (found === null || found.stats === null) throw new Refused('not_found', 'no such file');
      if (found.name === null) throw new Refused('not_a_file', 'the workspace root is a directory');
      const { fd, size } = openFile(walk, found.name);
      try {
        const bytes = readPrefix(fd, Math.max(0, Math.min(Number(request.maximumBytes) || 0, size)));
        return { bytes: bytes.toString('base64'), totalBytes: size };
      } finally {
        closeSync(fd);
      }
    });
  },
  same(request) {
    return withWalk(request.ws, (walk) => {
      const found = walk.final(request.path, false);
      if (found === null || found.stats === null || found.name === null) return false;
      return sameBytes(walk, found.name, Buffer.from(String(request.data), 'base64'));
    });
  },
  list(request) {
    return withWalk(request.ws, (walk) => {
      const found = walk.final(request.path, false);
      if (found === null || found.stats === null) throw new Refused('not_found', 'no such folder');
      if (found.name !== null) {
        if (!found.stats.isDirectory()) throw new Refused('not_a_directory', 'not a directory');
        const entered = walk.enter(found.name, false);
        if (entered !== true) throw new Refused('escape', 'the folder was swapped during the call');
      }
      const keep = Math.max(1, Math.min(Number(request.keep) || 1, 100_000));
      /** @type {string[]} */
      const kept = [];
      const listing = opendirSync(fdPath(walk.top), { bufferSize: 256 });
      try {
        for (let entry = listing.readSync(); entry !== null; entry = listing.readSync()) {
          const name = entry.name;
          if (kept.length === keep && name >= /** @type {string} */ (kept[keep - 1])) continue;
          let low = 0;
          let high = kept.length;
          while (low < high) {
            const middle = (low + high) >>> 1;
            if (/** @type {string} */ (kept[middle]) < name) low = middle + 1;
            else high = middle;
          }
          kept.splice(low, 0, name);
          if (kept.length > keep) kept.pop();
        }
      } finally {
        listing.closeSync();
      }
      const entries = [];
      for (const name of kept) {
        try {
          const stats = lstatSync(at(walk.top, name));
          entries.push(stats.isFile() ? { name, type: 'file', size: stats.size } : { name, type: typeOf(stats) });
        } catch {
          // removed between the listing and the lstat
        }
      }
      return { entries };
    });
  },
  write(request) {
    const bytes = Buffer.from(String(request.data), 'base64');
    const mode = request.mode === 'create' ? 'create' : 'overwrite';
    return withWalk(request.ws, (walk) => {
      const usage = usageOf(walk.stack[0]);
      if (usage.entries + 2 > MAXIMUM_ENTRIES || usage.bytes + bytes.length > MAXIMUM_BYTES) {
        throw new Refused('disk_limit', 'the workspace is at its disk limit');
      }
      const found = walk.final(request.path, true);
      if (found === null) throw new Refused('not_found', 'a folder on the path could not be made');
      if (found.name === null) throw new Refused('is_directory', 'the workspace root is a directory');
      const { name } = found;
      let existingMode;
      if (found.stats !== null) {
        if (found.stats.isDirectory()) throw new Refused('is_directory', 'is a directory');
        if (!found.stats.isFile()) throw new Refused('not_a_file', 'not a regular file');
        existingMode = found.stats.mode & 0o7777;
        if (mode === 'create') {
          if (sameBytes(walk, name, bytes)) return { created: false, unchanged: true };
          throw new Refused('exists', 'already exists with different content');
        }
      }
      const temporary = `.${name.slice(0, 200)}.${randomBytes(6).toString('hex')}.veetbot-tmp`;
      const fd = openSync(at(walk.top, temporary), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0o644);
      let placed = false;
      try {
        let written = 0;
        while (written < bytes.length) written += writeSync(fd, bytes, written, bytes.length - written);
        if (existingMode !== undefined) fchmodSync(fd, existingMode);
        fsyncSync(fd);
        closeSync(fd);
        if (mode === 'create') {
          try {
            linkSync(at(walk.top, temporary), at(walk.top, name));
          } catch (error) {
            if (errnoOf(error) !== 'EEXIST') throw error;
            if (sameBytes(walk, name, bytes)) return { created: false, unchanged: true };
            throw new Refused('exists', 'already exists with different content');
          }
          syncFolder(walk.top);
          return { created: true, unchanged: false };
        }
        renameSync(at(walk.top, temporary), at(walk.top, name));
        placed = true;
        syncFolder(walk.top);
        return { created: found.stats === null, unchanged: false };
      } catch (error) {
        try {
          closeSync(fd);
        } catch {
          // closed above
        }
        throw error;
      } finally {
        if (!placed) {
          try {
            unlinkSync(at(walk.top, temporary));
          } catch {
            // never made, or already renamed
          }
        }
      }
    });
  },
  usage(request) {
    const workspaceFd = openWorkspace(request.ws);
    try {
      return usageOf(workspaceFd);
    } finally {
      closeSync(workspaceFd);
    }
  },
};

function syncFolder(fd) {
  try {
    fsyncSync(fd);
  } catch {
    // Some file systems refuse fsync on a directory; the data itself is already flushed.
  }
}

function answer(request) {
  const id = request !== null && typeof request === 'object' ? request.id : null;
  try {
    const operation = operations[request.op];
    if (typeof operation !== 'function') throw new Refused('io', 'unknown operation');
    return { id, ok: true, value: operation(request) };
  } catch (error) {
    const refused = fromErrno(error);
    return { id, ok: false, code: refused.code, detail: refused.message };
  }
}

let pending = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => {
  pending += chunk;
  if (pending.length > MAX_LINE && !pending.includes('\n')) process.exit(2);
  for (let newline = pending.indexOf('\n'); newline !== -1; newline = pending.indexOf('\n')) {
    const line = pending.slice(0, newline);
    pending = pending.slice(newline + 1);
    let request;
    try {
      request = JSON.parse(line);
    } catch {
      request = null;
    }
    process.stdout.write(
      `${JSON.stringify(request === null ? { id: null, ok: false, code: 'io', detail: 'malformed request' } : answer(request))}\n`,
    );
  }
});
process.stdin.on('end', () => process.exit(0));
