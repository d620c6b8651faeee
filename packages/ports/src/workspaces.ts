import type { WorkspaceHandle } from './tool';

/**
 * The run's workspace folder, handed out by the composition root: each run gets
 * `<root>/<tenant-hash>/<run_id>`, created on first use. A port because the runtime never
 * touches the file system itself (ARCHITECTURE.md "Import boundaries": no node:fs in the
 * pure middle); the folder adapter lives where node:fs may be imported.
 */
export interface WorkspaceProvider {
  /** The run's workspace, created if absent; null when this deployment offers none. */
  forRun(tenantId: string, runId: string): Promise<WorkspaceHandle | null>;
}

/**
 * Why a workspace file operation did not happen (docs/adr/0058). Stable: the workspace tools map
 * each to one reason code. `escape`: a path, or a symbolic link met on it, leads outside the
 * workspace (or was swapped for one during the call); `disk_limit`: the run's workspace is at
 * its cap; `unavailable`: the confined file helper could not serve the call.
 */
export type WorkspaceFileErrorCode =
  | 'not_found'
  | 'not_a_directory'
  | 'is_directory'
  | 'not_a_file'
  | 'exists'
  | 'escape'
  | 'symlink_loop'
  | 'name_too_long'
  | 'permission'
  | 'disk_limit'
  | 'io'
  | 'unavailable';

export type WorkspaceFileResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly code: WorkspaceFileErrorCode; readonly detail: string };

export type WorkspaceEntryType = 'file' | 'directory' | 'symlink' | 'other';

export interface WorkspaceEntryStat {
  readonly type: WorkspaceEntryType;
  /** Bytes, for regular files; 0 otherwise. */
  readonly size: number;
}

export interface WorkspaceListEntry {
  readonly name: string;
  readonly type: WorkspaceEntryType;
  /** Bytes, for regular files only. */
  readonly size?: number;
}

export interface WorkspaceUsage {
  readonly bytes: number;
  readonly entries: number;
  readonly maximumBytes: number;
  readonly maximumEntries: number;
}

/**
 * File operations on one run's workspace, by workspace-relative path segments (already checked
 * lexically: no `..`, no `/`, no NUL). The implementation walks component by component from a
 * handle on the workspace, never following a link out of it, in a process that cannot reach the
 * data folder (docs/adr/0058). Symbolic links inside the workspace are followed by the walk's
 * own rules (a target must stay inside); nothing is ever resolved by the kernel from a path a
 * tenant could swap.
 */
export interface WorkspaceFiles {
  /** The entry the path names after in-tree links, or null when it (or a folder above it) is absent. */
  stat(segments: readonly string[]): Promise<WorkspaceFileResult<WorkspaceEntryStat | null>>;
  /** At most `maximumBytes` of a regular file, with its size. */
  read(
    segments: readonly string[],
    maximumBytes: number,
  ): Promise<WorkspaceFileResult<{ readonly bytes: Uint8Array; readonly totalBytes: number }>>;
  /** Whether a regular file holds exactly `bytes` (reads at most bytes.length + 1). */
  sameContent(segments: readonly string[], bytes: Uint8Array): Promise<WorkspaceFileResult<boolean>>;
  /** The `keep` smallest names of a directory in code-unit order, with their types (links not followed). */
  list(segments: readonly string[], keep: number): Promise<WorkspaceFileResult<{ readonly entries: readonly WorkspaceListEntry[] }>>;
  /**
   * Write a file atomically (a flushed temporary file renamed over it; `create`: linked, never
   * replacing), creating missing folders; refused with `disk_limit` past the run's cap.
   */
  write(
    segments: readonly string[],
    bytes: Uint8Array,
    mode: 'create' | 'overwrite',
  ): Promise<WorkspaceFileResult<{ readonly created: boolean; readonly unchanged: boolean }>>;
  /** What the workspace holds against its cap. */
  usage(): Promise<WorkspaceFileResult<WorkspaceUsage>>;
}
