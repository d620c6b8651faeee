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
