import type { ArtifactWriter } from './tool';

/** Bytes of artifacts; the metadata row lives in ArtifactStore. A folder by default. */
export interface BlobStore {
  /** Write once; the key is (tenant, artifact id). */
  put(tenantId: string, artifactId: string, bytes: Uint8Array): Promise<void>;
  /** Null when absent (or another tenant's). */
  get(tenantId: string, artifactId: string): Promise<Uint8Array | null>;
}

export interface ArtifactScope {
  readonly tenantId: string;
  readonly runId: string;
  readonly invocationId: string | null;
}

/** Hands out ArtifactWriters scoped to one run (§ ToolExecutionContext: "scoped to its own run"). */
export interface ArtifactWriterFactory {
  forScope(scope: ArtifactScope): ArtifactWriter;
}
