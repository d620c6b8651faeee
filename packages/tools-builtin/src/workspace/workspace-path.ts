import type { Stats } from 'node:fs';
import { lstat, readlink, realpath } from 'node:fs/promises';
import path from 'node:path';
import type { ToolResultInput } from '@veetbot/domain';
import { errnoCode, toolFailure } from '../tool-result-helpers';

/**
 * Confinement of workspace.* paths to the run's workspace (§ ToolExecutionContext: the
 * workspace readers "see only the run's workspace").
 *
 * Two stages. The lexical stage refuses what no workspace-relative path needs: absolute
 * paths, `..` segments, NUL and other control characters, backslashes and drive letters (so
 * nothing Windows-shaped is ever reinterpreted). The resolution stage walks the path one
 * component at a time from the realpath of the root, following symbolic links itself, and
 * refuses the moment a link would take it outside — whether or not the target exists, so a
 * dangling link cannot be used to create a file elsewhere, and the answer never reveals
 * whether something exists outside the root. An existing result is then checked once more
 * with fs.realpath.
 *
 * The honest limit: between this check and the open, another process with write access to
 * the workspace could swap a directory for a link. Readers open with O_NOFOLLOW so the last
 * component cannot be swapped; writers re-check the parent's realpath after creating it.
 */

export const WORKSPACE_PATH_MAX_LENGTH = 1_024;
/** Linux's SYMLOOP_MAX is 40; a longer chain is treated as a loop. */
const MAX_SYMLINK_HOPS = 40;

export type PathResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly failure: ToolResultInput };

const fail = <T>(failure: ToolResultInput): PathResult<T> => ({ ok: false, failure });

export const pathEscape = (detail: string): ToolResultInput => toolFailure('permission', 'path_escape', detail);
export const pathNotFound = (relative: string): ToolResultInput =>
  toolFailure('not_found', 'path', `No such file or directory in the workspace: ${relative}`);

/** Lexical stage: the segments of a workspace-relative path, without "." and empty segments. */
export function parseWorkspacePath(input: string): PathResult<string[]> {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing NUL and control characters in a hostile path is the point
  if (/[\u0000-\u001f\u007f]/.test(input)) {
    return fail(toolFailure('invalid_arguments', 'path', 'Path contains a NUL or control character'));
  }
  if (input.length > WORKSPACE_PATH_MAX_LENGTH) {
    return fail(toolFailure('invalid_arguments', 'path', `Path is longer than ${WORKSPACE_PATH_MAX_LENGTH} characters`));
  }
  if (input.includes('\\')) return fail(pathEscape('Path contains a backslash'));
  if (/^[A-Za-z]:/.test(input)) return fail(pathEscape('Path starts with a drive letter'));
  if (input.startsWith('/') || path.isAbsolute(input)) return fail(pathEscape('Path is absolute'));
  const segments = input.split('/');
  if (segments.includes('..')) return fail(pathEscape('Path has a ".." segment'));
  return { ok: true, value: segments.filter((s) => s !== '' && s !== '.') };
}

export interface ResolvedWorkspacePath {
  /** The realpath of the workspace root. */
  readonly realRoot: string;
  /** Absolute, every existing component resolved; inside realRoot. */
  readonly absolute: string;
  /** False when the walk reached a component that does not exist (a write may create it). */
  readonly exists: boolean;
}

export function isInside(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return candidate.startsWith(prefix);
}

/** A Node.js file-system error as a ToolFailure; never a thrown error. */
export function workspaceIoFailure(error: unknown, relative: string): ToolResultInput {
  switch (errnoCode(error)) {
    case 'ENOENT':
    case 'ENOTDIR':
      return pathNotFound(relative);
    case 'EACCES':
    case 'EPERM':
      return toolFailure('permission', 'denied', `The file system refused access to ${relative}`);
    case 'ENAMETOOLONG':
      return toolFailure('invalid_arguments', 'path', `A path component is too long: ${relative}`);
    case 'ELOOP':
      return toolFailure('invalid_arguments', 'symlink_loop', `Too many symbolic links: ${relative}`);
    default:
      return toolFailure('internal', 'io', `File system error ${errnoCode(error) ?? String(error)} on ${relative}`);
  }
}

/** The realpath of the workspace root, or a failure when the root itself is unusable. */
export async function realWorkspaceRoot(root: string): Promise<PathResult<string>> {
  try {
    const real = await realpath(root);
    const stats = await lstat(real);
    if (!stats.isDirectory()) return fail(toolFailure('internal', 'workspace_unavailable', `Workspace root is not a directory: ${root}`));
    return { ok: true, value: real };
  } catch (error) {
    return fail(
      toolFailure('internal', 'workspace_unavailable', `Workspace root is unusable (${errnoCode(error) ?? String(error)}): ${root}`),
    );
  }
}

/**
 * Resolution stage. Follows links component by component; `..` (which can only come from a
 * link's target) may not climb above the root, and an absolute target must name the root
 * (by its realpath or by the path it was configured with).
 */
export async function resolveWorkspacePath(root: string, segments: readonly string[]): Promise<PathResult<ResolvedWorkspacePath>> {
  const rootResult = await realWorkspaceRoot(root);
  if (!rootResult.ok) return rootResult;
  const realRoot = rootResult.value;
  const configuredRoot = path.resolve(root);
  const relative = segments.join('/') || '.';

  let current = realRoot;
  const pending = [...segments];
  let hops = 0;
  while (pending.length > 0) {
    const segment = pending.shift() as string;
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      if (current === realRoot) return fail(pathEscape(`A symbolic link on ${relative} leads above the workspace root`));
      current = path.dirname(current);
      continue;
    }
    const next = path.join(current, segment);
    let stats: Stats;
    try {
      stats = await lstat(next);
    } catch (error) {
      if (errnoCode(error) !== 'ENOENT') return fail(workspaceIoFailure(error, relative));
      // Nothing below a missing directory can be a link, but a ".." left over from a link's
      // target would be resolved against directories that do not exist yet: refuse it.
      if (pending.includes('..')) return fail(pathEscape(`A symbolic link on ${relative} leads through a missing directory`));
      const rest = pending.filter((s) => s !== '' && s !== '.');
      return { ok: true, value: { realRoot, absolute: path.join(next, ...rest), exists: false } };
    }
    if (stats.isSymbolicLink()) {
      hops += 1;
      if (hops > MAX_SYMLINK_HOPS) return fail(toolFailure('invalid_arguments', 'symlink_loop', `Too many symbolic links: ${relative}`));
      let target: string;
      try {
        target = await readlink(next);
      } catch (error) {
        return fail(workspaceIoFailure(error, relative));
      }
      if (path.isAbsolute(target)) {
        const base = isInside(realRoot, target) ? realRoot : isInside(configuredRoot, target) ? configuredRoot : undefined;
        if (base === undefined) return fail(pathEscape(`A symbolic link on ${relative} points outside the workspace`));
        current = realRoot;
        pending.unshift(...target.slice(base.length).split('/'));
      } else {
        // Relative to the directory holding the link, which is `current`.
        pending.unshift(...target.split('/'));
      }
      continue;
    }
    if (!stats.isDirectory() && pending.some((s) => s !== '' && s !== '.')) {
      return fail(pathNotFound(relative));
    }
    current = next;
  }

  // Belt and braces: the kernel's answer must agree with the walk.
  try {
    const real = await realpath(current);
    if (!isInside(realRoot, real)) return fail(pathEscape(`${relative} resolves outside the workspace`));
    return { ok: true, value: { realRoot, absolute: real, exists: true } };
  } catch (error) {
    return fail(workspaceIoFailure(error, relative));
  }
}

/** Both stages, for a path argument as the model sent it. */
export async function confineWorkspacePath(
  root: string,
  input: string,
): Promise<PathResult<ResolvedWorkspacePath & { readonly relative: string; readonly isRoot: boolean }>> {
  const parsed = parseWorkspacePath(input);
  if (!parsed.ok) return parsed;
  const resolved = await resolveWorkspacePath(root, parsed.value);
  if (!resolved.ok) return resolved;
  return { ok: true, value: { ...resolved.value, relative: parsed.value.join('/') || '.', isRoot: parsed.value.length === 0 } };
}
