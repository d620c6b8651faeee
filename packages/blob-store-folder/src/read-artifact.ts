import { createHash } from 'node:crypto';
import type { ArtifactRow, ArtifactStore, BlobStore } from '@veetbot/ports';
import { isArtifactId } from './artifact-id';
import { ArtifactIntegrityError, BlobStoreError } from './errors';

export interface ReadArtifactDeps {
  readonly blobs: BlobStore;
  readonly artifacts: ArtifactStore;
}

/**
 * The owner-scoped read behind the API's artifact routes (§ Output: "a client reads the whole
 * capture through the owner-scoped artifact routes"). Never reachable from a tool.
 *
 * The metadata row comes first, through the tenant's RLS-scoped store: no row, no bytes — so
 * an orphan blob (a write whose row never landed) is unreadable, and another tenant's id is
 * null. Then the bytes, checked against the row's length and sha256.
 *
 * Throws BlobStoreError `blob.invalid_artifact_id` for an id that is not a UUID (the API maps
 * it to a 400), ArtifactIntegrityError when the bytes are missing or do not match the row.
 */
export async function readArtifact(
  deps: ReadArtifactDeps,
  tenantId: string,
  artifactId: string,
): Promise<{ row: ArtifactRow; bytes: Uint8Array } | null> {
  if (!isArtifactId(artifactId)) throw new BlobStoreError('blob.invalid_artifact_id', 'An artifact id must be a UUID.');
  const row = await deps.artifacts.get(tenantId, artifactId);
  if (row === null) return null;
  const bytes = await deps.blobs.get(tenantId, row.id);
  if (bytes === null) {
    throw new ArtifactIntegrityError('artifact.blob_missing', row.id, `The bytes of artifact ${row.id} are missing.`);
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (bytes.byteLength !== row.bytes || sha256 !== row.sha256) {
    throw new ArtifactIntegrityError(
      'artifact.integrity_mismatch',
      row.id,
      `The bytes of artifact ${row.id} do not match its recorded length and sha256.`,
    );
  }
  return { row, bytes };
}
