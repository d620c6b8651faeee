import path from 'node:path';
import type { ToolResultInput } from '@veetbot/domain';
import type { WorkspaceFileErrorCode } from '@veetbot/ports';
import { toolFailure } from '../tool-result-helpers';

/**
 * Confinement of workspace.* paths to the run's workspace (§ ToolExecutionContext: the
 * workspace readers "see only the run's workspace"; docs/adr/0058).
 *
 * Two stages. The lexical stage here refuses what no workspace-relative path needs: absolute
 * paths, `..` segments, NUL and other control characters, backslashes and drive letters (so
 * nothing Windows-shaped is ever reinterpreted). The resolution stage is not here: the tools
 * hand the segments to `ctx.workspace.files`, whose confined helper walks them from a handle on
 * the workspace one component at a time and never lets the kernel follow a name a tenant could
 * swap. Host code in this process never opens a workspace path.
 */

export const WORKSPACE_PATH_MAX_LENGTH = 1_024;

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

/** The lexical stage with the path as the model will read it back. */
export function confineWorkspacePath(
  input: string,
): PathResult<{ readonly segments: string[]; readonly relative: string; readonly isRoot: boolean }> {
  const parsed = parseWorkspacePath(input);
  if (!parsed.ok) return parsed;
  return { ok: true, value: { segments: parsed.value, relative: parsed.value.join('/') || '.', isRoot: parsed.value.length === 0 } };
}

/**
 * A workspace file operation's refusal as a ToolFailure (docs/adr/0058). The detail names the
 * workspace-relative path only: never a host path.
 */
export function workspaceFileFailure(code: WorkspaceFileErrorCode, relative: string): ToolResultInput {
  switch (code) {
    case 'not_found':
      return pathNotFound(relative);
    case 'not_a_directory':
      return toolFailure('invalid_arguments', 'not_a_directory', `Not a directory: ${relative}`);
    case 'is_directory':
      return toolFailure('invalid_arguments', 'is_directory', `Is a directory: ${relative}`);
    case 'not_a_file':
      return toolFailure('invalid_arguments', 'not_a_file', `Not a regular file: ${relative}`);
    case 'exists':
      return toolFailure('invalid_arguments', 'already_exists', `Already exists with different content: ${relative}`);
    case 'escape':
      return pathEscape(`${relative} leads outside the workspace, or was swapped for a link during the call`);
    case 'symlink_loop':
      return toolFailure('invalid_arguments', 'symlink_loop', `Too many symbolic links: ${relative}`);
    case 'name_too_long':
      return toolFailure('invalid_arguments', 'path', `A path component is too long: ${relative}`);
    case 'permission':
      return toolFailure('permission', 'denied', `The file system refused access to ${relative}`);
    case 'disk_limit':
      return toolFailure('output_too_large', 'workspace_disk', `The workspace is at its disk limit; ${relative} was not written`);
    case 'unavailable':
      return toolFailure('internal', 'workspace_unavailable', `The workspace could not be reached for ${relative}`, true);
    case 'io':
      return toolFailure('internal', 'io', `File system error on ${relative}`);
  }
}
