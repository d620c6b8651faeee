import { fileURLToPath } from 'node:url';

/**
 * The folder holding the sandbox's client library (`veetbot-tools.mjs`), shipped with this
 * package. The runtime mounts it read-only at BRIDGE_CLIENT_SANDBOX_DIR (docs/adr/0038).
 */
export const BRIDGE_CLIENT_HOST_DIR = fileURLToPath(new URL('../../client', import.meta.url));
/** Where the client library appears inside: `import { tools } from '/opt/veetbot/veetbot-tools.mjs'`. */
export const BRIDGE_CLIENT_SANDBOX_DIR = '/opt/veetbot';
/** Where the turn's socket folder appears inside; only that turn's folder is mounted. */
export const BRIDGE_SOCKET_SANDBOX_DIR = '/run/veetbot-bridge';
export const BRIDGE_SOCKET_NAME = 'bridge.sock';
