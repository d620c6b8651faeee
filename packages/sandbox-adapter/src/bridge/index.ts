export {
  BridgeOpenError,
  BridgeServer,
  type BridgeServerOptions,
  type BridgeTurnHandle,
  DEFAULT_BRIDGE_MAXIMUM_CALLS,
  type OpenTurnOptions,
} from './bridge-server';
export { BRIDGE_CLIENT_HOST_DIR, BRIDGE_CLIENT_SANDBOX_DIR, BRIDGE_SOCKET_SANDBOX_DIR } from './client-folder';
export { BRIDGE_ERRORS, BRIDGE_MAX_FRAME_BYTES, type BridgeErrorCode } from './bridge-wire';
