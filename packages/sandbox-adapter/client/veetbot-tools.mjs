// The orchestration bridge's client for programs inside the sandbox (docs/adr/0038).
// Plain ESM, no dependencies: `import { tools } from '/opt/veetbot/veetbot-tools.mjs'`, then
// `const item = await tools.call('workspace.read_text', { path: 'notes.md' })`.
// `item` is the outcome object the model reads: item.outcome.status is one of succeeded,
// failed, denied, unavailable, uncertain. The socket path and the turn's token are set by the
// platform (VEETBOT_BRIDGE_SOCKET, VEETBOT_BRIDGE_TOKEN). Calls run one at a time.
import { connect } from 'node:net';

/** A refusal of the bridge itself (a wrong token, a closed turn, a broken connection). */
export class BridgeError extends Error {
  constructor(code, message) {
    super(`${code}: ${message}`);
    this.name = 'BridgeError';
    this.code = code;
  }
}

let connection = null;
let queue = Promise.resolve();
let counted = 0;

function open() {
  const socketPath = process.env.VEETBOT_BRIDGE_SOCKET;
  const token = process.env.VEETBOT_BRIDGE_TOKEN;
  if (!socketPath || !token) throw new BridgeError('bridge.not_configured', 'VEETBOT_BRIDGE_SOCKET and VEETBOT_BRIDGE_TOKEN are not set.');
  const state = { socket: connect(socketPath), buffer: '', waiting: null, failure: null };
  state.socket.setEncoding('utf8');
  const fail = (error) => {
    state.failure ??= error;
    const waiting = state.waiting;
    state.waiting = null;
    waiting?.reject(state.failure);
  };
  state.socket.on('data', (text) => {
    state.buffer += text;
    for (let newline = state.buffer.indexOf('\n'); newline !== -1; newline = state.buffer.indexOf('\n')) {
      const line = state.buffer.slice(0, newline);
      state.buffer = state.buffer.slice(newline + 1);
      let frame;
      try {
        frame = JSON.parse(line);
      } catch {
        fail(new BridgeError('bridge.frame_malformed', 'The bridge answered something that is not JSON.'));
        continue;
      }
      if (frame && typeof frame === 'object' && frame.error) {
        fail(new BridgeError(String(frame.error.code), String(frame.error.message)));
        continue;
      }
      const waiting = state.waiting;
      state.waiting = null;
      waiting?.resolve(frame);
    }
  });
  state.socket.on('error', (error) => fail(new BridgeError('bridge.connection_failed', error.message)));
  state.socket.on('close', () => fail(new BridgeError('bridge.connection_closed', 'The bridge closed the connection.')));
  state.socket.write(`${JSON.stringify({ token })}\n`);
  return state;
}

function send(name, args) {
  connection ??= open();
  const state = connection;
  if (state.failure) return Promise.reject(state.failure);
  return new Promise((resolve, reject) => {
    state.waiting = { resolve, reject };
    // Held open only while a call is waiting, so a finished program exits by itself.
    state.socket.ref();
    // The bridge counts ordinals itself; this one is informational and ignored.
    state.socket.write(`${JSON.stringify({ call: name, arguments: args, ordinal: counted })}\n`);
    counted += 1;
  }).finally(() => state.socket.unref());
}

export const tools = {
  /** Call a tool through the pipeline; resolves with the outcome object the model reads. */
  call(name, args = {}) {
    const result = queue.then(() => send(name, args));
    queue = result.catch(() => undefined);
    return result;
  },
};
