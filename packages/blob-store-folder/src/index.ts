export { FolderBlobStore } from './folder-blob-store';
export { createArtifactWriterFactory } from './artifact-writer';
export { readArtifact } from './read-artifact';
export { FolderWorkspaceProvider } from './folder-workspace-provider';
