export { BubblewrapSandbox, type BubblewrapSandboxOptions } from './bubblewrap-sandbox';
export { BubblewrapOrchestration, type BubblewrapOrchestrationOptions } from './bubblewrap-orchestration';
export {
  BRIDGE_CLIENT_HOST_DIR,
  BRIDGE_CLIENT_SANDBOX_DIR,
  BRIDGE_ERRORS,
  BRIDGE_MAX_FRAME_BYTES,
  BRIDGE_SOCKET_SANDBOX_DIR,
  BridgeOpenError,
  BridgeServer,
  type BridgeErrorCode,
  type BridgeServerOptions,
  type BridgeTurnHandle,
  DEFAULT_BRIDGE_MAXIMUM_CALLS,
  type OpenTurnOptions,
} from './bridge/index';
export { WorkspaceFileService, type WorkspaceFileServiceOptions, type WorkspaceHelperConfinement } from './workspace-files';
