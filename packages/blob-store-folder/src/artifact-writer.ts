import { createHash, randomUUID } from 'node:crypto';
import { ArtifactRef, TrustLevel } from '@veetbot/domain';
import type { ArtifactScope, ArtifactStore, ArtifactWriteRequest, ArtifactWriter, ArtifactWriterFactory, BlobStore } from '@veetbot/ports';

export interface ArtifactWriterDeps {
  readonly blobs: BlobStore;
  readonly artifacts: ArtifactStore;
  readonly clock: { now(): Date };
}

/**
 * § ToolExecutionContext: "artifacts is a writer, not the full ArtifactStore. A tool may create
 * artifacts scoped to its own run; it may not read arbitrary artifacts by id". The writer
 * handed out has exactly one method, `write`; nothing on it reads.
 *
 * Order: the blob first, then the metadata row. A crash or a failed insert in between leaves
 * an orphan blob and no row. Orphans are never readable (every read goes through the row, see
 * readArtifact) and are garbage-collectable: a blob with no row older than any in-flight write
 * can be deleted. The opposite order would leave rows that point at nothing.
 */
export function createArtifactWriterFactory(deps: ArtifactWriterDeps): ArtifactWriterFactory {
  return Object.freeze({
    forScope(scope: ArtifactScope): ArtifactWriter {
      const { tenantId, runId, invocationId } = scope;
      const write = async (request: ArtifactWriteRequest): Promise<ArtifactRef> => {
        // Copy first: the caller's buffer could change between hashing and writing.
        const bytes = Uint8Array.from(request.bytes);
        const trust = TrustLevel.parse(request.trust);
        const id = randomUUID();
        const sha256 = createHash('sha256').update(bytes).digest('hex');
        // Validate the reference before any side effect (e.g. an empty media type).
        const ref = ArtifactRef.parse({ artifact_id: id, media_type: request.mediaType, bytes: bytes.byteLength, sha256, trust });
        await deps.blobs.put(tenantId, id, bytes);
        await deps.artifacts.insert(tenantId, {
          id,
          runId,
          invocationId,
          mediaType: ref.media_type,
          bytes: ref.bytes,
          sha256,
          trust,
          createdAt: deps.clock.now(),
        });
        return ref;
      };
      return Object.freeze({ write });
    },
  });
}
