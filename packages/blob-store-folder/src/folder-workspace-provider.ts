import { lstat, mkdir } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { WorkspaceHandle, WorkspaceProvider } from '@veetbot/ports';
import { isArtifactId } from './artifact-id';
import { WorkspaceError } from './errors';
import { tenantFolder } from './folder-blob-store';

export interface FolderWorkspaceProviderOptions {
  /** The folder that holds every run's workspace. Created (0700) on first use. */
  readonly root: string;
  /**
   * The handle of a run folder once it exists (docs/adr/0058): the composition gives the sandbox
   * adapter's confined workspace helper (`WorkspaceFileService.handle`), which hands the folder
   * to the sandbox's host user and serves its files. Tools never touch a workspace path themselves.
   */
  readonly open: (folder: string) => WorkspaceHandle;
}

const DIR_MODE = 0o700;

/**
 * ports.WorkspaceProvider over a folder (ports/workspaces.ts): each run gets
 * `<root>/<tenant-hash>/<run_id>`, tenant-hash = the first 32 hex digits of sha256(tenantId)
 * (the blob store's tenant folder name), created on first use with mode 0700. Run ids are
 * UUIDs (the runs table's key), so a run id can never name a path outside its tenant's folder;
 * anything else is refused rather than sanitised. The workspace tools confine paths inside the
 * root they are given; this only decides where that root is.
 */
export class FolderWorkspaceProvider implements WorkspaceProvider {
  readonly #root: string;
  readonly #open: (folder: string) => WorkspaceHandle;

  constructor(options: FolderWorkspaceProviderOptions) {
    if (typeof options.root !== 'string' || options.root.length === 0) {
      throw new WorkspaceError('workspace.io', 'FolderWorkspaceProvider needs a root folder.');
    }
    this.#root = resolve(options.root);
    this.#open = options.open;
  }

  /** The folder a run's workspace lives in, without creating it. */
  folderOf(tenantId: string, runId: string): string {
    if (typeof tenantId !== 'string' || tenantId.length === 0)
      throw new WorkspaceError('workspace.invalid_tenant', 'A workspace needs a non-empty tenant id.');
    if (!isArtifactId(runId)) throw new WorkspaceError('workspace.invalid_run_id', 'A run id must be a UUID.');
    return join(this.#root, tenantFolder(tenantId), runId.toLowerCase());
  }

  async forRun(tenantId: string, runId: string): Promise<WorkspaceHandle> {
    const folder = this.folderOf(tenantId, runId);
    try {
      await mkdir(folder, { recursive: true, mode: DIR_MODE });
    } catch (cause) {
      throw new WorkspaceError('workspace.io', 'Could not create the run workspace.', { cause });
    }
    // A symlink planted where the workspace should be would move every workspace tool's root.
    const entry = await lstat(folder).catch((cause: unknown) => {
      throw new WorkspaceError('workspace.io', 'Could not inspect the run workspace.', { cause });
    });
    if (!entry.isDirectory()) throw new WorkspaceError('workspace.io', 'The run workspace is not a plain folder.');
    try {
      return this.#open(folder);
    } catch (cause) {
      throw new WorkspaceError('workspace.io', 'Could not hand the run workspace to the sandbox user.', { cause });
    }
  }
}
