export { FolderBlobStore, tenantFolder } from './folder-blob-store';
export type { FolderBlobStoreOptions } from './folder-blob-store';
export { createArtifactWriterFactory } from './artifact-writer';
export type { ArtifactWriterDeps } from './artifact-writer';
export { readArtifact } from './read-artifact';
export type { ReadArtifactDeps } from './read-artifact';
export { isArtifactId } from './artifact-id';
export { BlobStoreError, ArtifactIntegrityError } from './errors';
export type { BlobStoreErrorCode, ArtifactIntegrityErrorCode } from './errors';
