import { VeetbotError } from '@veetbot/domain';

/**
 * Why the folder blob store refused a call.
 *
 *   blob.invalid_artifact_id  the id is not a canonical UUID (ids become file names: nothing
 *                             else is accepted, so no path traversal is expressible)
 *   blob.invalid_tenant       the tenant id is empty
 *   blob.write_once           a different blob already exists under this (tenant, id)
 *   blob.io                   the file system refused (permissions, disk full, ...)
 */
export type BlobStoreErrorCode = 'blob.invalid_artifact_id' | 'blob.invalid_tenant' | 'blob.write_once' | 'blob.io';

export class BlobStoreError extends VeetbotError {
  declare readonly code: BlobStoreErrorCode;
  constructor(code: BlobStoreErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, { retryable: false, ...options });
  }
}

/**
 * The owner-scoped read found a metadata row whose bytes do not match it (§ Output: artifacts
 * are write-once; a mismatch means the blob was altered or lost outside the platform).
 *
 *   artifact.blob_missing        the row exists, the blob does not
 *   artifact.integrity_mismatch  the blob's length or sha256 differs from the row
 */
export type ArtifactIntegrityErrorCode = 'artifact.blob_missing' | 'artifact.integrity_mismatch';

export class ArtifactIntegrityError extends VeetbotError {
  declare readonly code: ArtifactIntegrityErrorCode;
  readonly artifactId: string;
  constructor(code: ArtifactIntegrityErrorCode, artifactId: string, message: string) {
    super(code, message);
    this.artifactId = artifactId;
  }
}

/**
 * Why the folder workspace provider refused a run's workspace.
 *
 *   workspace.invalid_tenant  the tenant id is empty
 *   workspace.invalid_run_id  the run id is not a UUID (it becomes a folder name)
 *   workspace.io              the file system refused, or the path is not a plain folder
 */
export type WorkspaceErrorCode = 'workspace.invalid_tenant' | 'workspace.invalid_run_id' | 'workspace.io';

export class WorkspaceError extends VeetbotError {
  declare readonly code: WorkspaceErrorCode;
  constructor(code: WorkspaceErrorCode, message: string, options: { cause?: unknown } = {}) {
    super(code, message, { retryable: false, ...options });
  }
}
