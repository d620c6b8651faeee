import type { TrustLevel } from '@veetbot/domain';

// The conventions every store follows are in stores.ts.

/** Artifact metadata; the bytes live in a blob store (a folder by default), not here. */
export interface ArtifactRow {
  readonly id: string;
  readonly tenantId: string;
  readonly runId: string;
  readonly invocationId: string | null;
  readonly mediaType: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly trust: TrustLevel;
  readonly createdAt: Date;
}

export interface NewArtifact {
  readonly id: string;
  readonly runId: string;
  readonly invocationId: string | null;
  readonly mediaType: string;
  readonly bytes: number;
  readonly sha256: string;
  readonly trust: TrustLevel;
  readonly createdAt: Date;
}

export interface ArtifactStore {
  insert(tenantId: string, artifact: NewArtifact): Promise<ArtifactRow>;
  get(tenantId: string, artifactId: string): Promise<ArtifactRow | null>;
  listForRun(tenantId: string, runId: string): Promise<ArtifactRow[]>;
}
