import { describe, expect, it } from 'vitest';
import * as surface from '../src/index';

// The names this package's entry exports at run time (docs/adr/0031): a name is here only
// because another workspace package imports it (only the composition roots may). Type-only
// exports are invisible at run time and are not listed. To change the surface, edit
// src/index.ts and this list in the same commit.
// The bridge (docs/adr/0038): the runtime opens a turn, mounts the client folder and the turn's
// socket folder, and names the wire's error codes and bounds.
const PUBLIC_SURFACE = [
  'BubblewrapSandbox',
  'WorkspaceFileService',
  // The orchestration turn the composition builds from both (docs/adr/0039).
  'BubblewrapOrchestration',
  'BridgeServer',
  'BridgeOpenError',
  'BRIDGE_CLIENT_HOST_DIR',
  'BRIDGE_CLIENT_SANDBOX_DIR',
  'BRIDGE_SOCKET_SANDBOX_DIR',
  'BRIDGE_ERRORS',
  'BRIDGE_MAX_FRAME_BYTES',
  'DEFAULT_BRIDGE_MAXIMUM_CALLS',
];

describe('@veetbot/sandbox-adapter public surface', () => {
  it('exports at run time exactly the names other workspace packages import', () => {
    expect(Object.keys(surface).sort()).toEqual([...PUBLIC_SURFACE].sort());
  });
});
