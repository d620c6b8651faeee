import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, mkdirSync, rmdirSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import path from 'node:path';
import { bridgeCallId, VeetbotError, withoutHostPaths } from '@veetbot/domain';
import type { BridgeCallHandler, BridgeTurn, SandboxReadOnlyBind } from '@veetbot/ports';
import { hostIdentity, type HostIdentity, searchable, untraversable } from '../host-identity';
import { BRIDGE_CLIENT_HOST_DIR, BRIDGE_CLIENT_SANDBOX_DIR, BRIDGE_SOCKET_NAME, BRIDGE_SOCKET_SANDBOX_DIR } from './client-folder';
import { bridgeRefusal, checkedOutcome } from './bridge-outcome';
import { newBridgeToken, tokensEqual } from './bridge-token';
import { BRIDGE_MAX_FRAME_BYTES, type BridgeErrorCode, errorFrame, parseFrame, parseRequest } from './bridge-wire';
import { FrameReader } from './frame-reader';

/** § Approvals inside a script: "the underlying calls are capped separately, default 64 per turn". */
export const DEFAULT_BRIDGE_MAXIMUM_CALLS = 64;
/**
 * Open connections per turn: each costs the worker a descriptor, and a program that opens them
 * in a loop must not exhaust the worker's (a sequential client needs one).
 */
export const BRIDGE_MAX_CONNECTIONS = 16;
/** After an error frame, how long the peer has to read it before the connection is destroyed. */
const ERROR_GRACE_MS = 1_000;
/** sun_path holds 108 bytes with its NUL: a longer socket path cannot be bound at all. */
const MAX_SOCKET_PATH_BYTES = 107;

/** The turn's socket could not be opened (the folder, the path length, the listen). */
export class BridgeOpenError extends VeetbotError {
  constructor(detail: string) {
    super('bridge.open_failed', detail);
  }
}

export interface BridgeServerOptions {
  /** The same sandbox host user the BubblewrapSandbox runs as (a root worker's; default 65534). */
  readonly hostUid?: number;
  readonly hostGid?: number;
}

export interface OpenTurnOptions {
  /** The folder per-turn folders are created in (the data folder's `bridge/`); traversable by the sandbox user. */
  readonly hostDir: string;
  /** Calls answered by the handler in this turn; later ones are refused with bridge.calls_exhausted. */
  readonly maximumCalls?: number;
}

/** One open turn: what the runtime hands the sandbox, and how it ends the turn. */
export interface BridgeTurnHandle {
  readonly socketHostPath: string;
  readonly socketSandboxPath: string;
  readonly token: string;
  /** Mount these read-only (SandboxRequest.readOnlyBinds): this turn's socket folder and the client library. */
  readonly readOnlyBinds: readonly SandboxReadOnlyBind[];
  /** Set these for the program (SandboxRequest.platformEnvironment). */
  readonly platformEnvironment: Readonly<Record<string, string>>;
  /** Calls counted so far (the next call's ordinal). */
  callsCounted(): number;
  /** Stop listening, end every connection, abort pending handlers, remove the socket and its folder. */
  close(): Promise<void>;
}

/**
 * § The programmatic orchestration bridge, its transport (docs/adr/0038): one unix socket per
 * turn in a fresh folder, owned by the sandbox's host user, mode 0600; a one-time token; the
 * bridge's own ordinal and call id. It never executes a tool: each call goes to the handler,
 * which re-enters the pipeline.
 */
export class BridgeServer {
  readonly #identity: HostIdentity | null;

  constructor(options: BridgeServerOptions = {}) {
    this.#identity = hostIdentity({
      ...(options.hostUid === undefined ? {} : { uid: options.hostUid }),
      ...(options.hostGid === undefined ? {} : { gid: options.hostGid }),
    });
  }

  async openTurn(turn: BridgeTurn, handler: BridgeCallHandler, options: OpenTurnOptions): Promise<BridgeTurnHandle> {
    const maximumCalls = options.maximumCalls ?? DEFAULT_BRIDGE_MAXIMUM_CALLS;
    if (!Number.isSafeInteger(maximumCalls) || maximumCalls < 0) throw new BridgeOpenError('maximumCalls is a non-negative integer');
    const hostDir = path.resolve(options.hostDir);
    mkdirSync(hostDir, { recursive: true, mode: 0o711 });
    // Set, not requested: the process umask (docs/adr/0054: 077) would leave it 0700.
    chmodSync(hostDir, 0o711);
    if (this.#identity !== null) {
      // mkdir's mode is cut by the umask (the product runs with 077): search for others, set outright.
      searchable(hostDir);
      const blocked = untraversable(hostDir, this.#identity);
      if (blocked !== null)
        throw new BridgeOpenError(`${blocked} is not traversable by the sandbox's host user (uid ${this.#identity.uid})`);
    }
    // A fresh folder per turn, random name: a path of an earlier turn names nothing any more.
    const turnDir = path.join(hostDir, randomBytes(16).toString('hex'));
    const socketHostPath = path.join(turnDir, BRIDGE_SOCKET_NAME);
    if (Buffer.byteLength(socketHostPath) > MAX_SOCKET_PATH_BYTES) {
      throw new BridgeOpenError(`the socket path ${socketHostPath} is longer than a unix socket path can be`);
    }
    // 0700 and ours until the socket's mode and owner are set: nobody else can connect meanwhile.
    mkdirSync(turnDir, { mode: 0o700 });
    const token = newBridgeToken();
    const session = new TurnSession(turn, handler, token, maximumCalls);
    const server = createServer((socket) => session.accept(socket));
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(socketHostPath, () => {
          server.off('error', reject);
          resolve();
        });
      });
      chmodSync(socketHostPath, 0o600);
      if (this.#identity !== null) {
        chownSync(socketHostPath, this.#identity.uid, this.#identity.gid);
        chownSync(turnDir, this.#identity.uid, this.#identity.gid);
      }
    } catch (error) {
      server.close();
      removeTurnFolder(turnDir);
      throw new BridgeOpenError(`the bridge socket cannot be opened: ${withoutHostPaths(String(error))}`);
    }
    server.on('error', () => undefined);
    const socketSandboxPath = path.posix.join(BRIDGE_SOCKET_SANDBOX_DIR, BRIDGE_SOCKET_NAME);
    let closing: Promise<void> | undefined;
    return {
      socketHostPath,
      socketSandboxPath,
      token,
      readOnlyBinds: [
        { hostPath: turnDir, sandboxPath: BRIDGE_SOCKET_SANDBOX_DIR },
        { hostPath: BRIDGE_CLIENT_HOST_DIR, sandboxPath: BRIDGE_CLIENT_SANDBOX_DIR },
      ],
      platformEnvironment: { VEETBOT_BRIDGE_SOCKET: socketSandboxPath, VEETBOT_BRIDGE_TOKEN: token },
      callsCounted: () => session.counted,
      close: () => {
        closing ??= (async () => {
          session.close();
          await new Promise<void>((resolve) => closeServer(server, resolve));
          removeTurnFolder(turnDir);
        })();
        return closing;
      },
    };
  }
}

/**
 * The turn's folder belongs to the sandbox's host user (docs/adr/0058): the worker removes the
 * socket it made, by name, then the folder if it is empty — never a recursive walk of a folder
 * another process of that user could have filled with links.
 */
function removeTurnFolder(turnDir: string): void {
  rmSync(path.join(turnDir, BRIDGE_SOCKET_NAME), { force: true });
  try {
    rmdirSync(turnDir);
  } catch {
    // Not empty (something else made an entry) or already gone: left as it is.
  }
}

/** Send the last frame and end; a peer that keeps the connection half-open is cut off soon after. */
function endSoon(socket: Socket, frame: string): void {
  socket.end(frame);
  setTimeout(() => socket.destroy(), ERROR_GRACE_MS).unref();
}

function closeServer(server: Server, done: () => void): void {
  server.close(() => done());
}

/** One turn's state: the token, the ordinal counter shared by every connection, the open sockets. */
class TurnSession {
  readonly #turn: BridgeTurn;
  readonly #handler: BridgeCallHandler;
  readonly #token: string;
  readonly #maximumCalls: number;
  /** The connections counted against BRIDGE_MAX_CONNECTIONS. */
  readonly #sockets = new Set<Socket>();
  readonly #everySocket = new Set<Socket>();
  readonly #abort = new AbortController();
  #counted = 0;

  constructor(turn: BridgeTurn, handler: BridgeCallHandler, token: string, maximumCalls: number) {
    this.#turn = turn;
    this.#handler = handler;
    this.#token = token;
    this.#maximumCalls = maximumCalls;
  }

  get counted(): number {
    return this.#counted;
  }

  close(): void {
    this.#abort.abort();
    for (const socket of this.#everySocket) socket.destroy();
    this.#everySocket.clear();
    this.#sockets.clear();
  }

  accept(socket: Socket): void {
    socket.on('error', () => undefined);
    // Every socket, refused ones too, is destroyed by close(): the listener's close waits for them.
    this.#everySocket.add(socket);
    socket.on('close', () => this.#everySocket.delete(socket));
    const refusal: BridgeErrorCode | null = this.#abort.signal.aborted
      ? 'bridge.turn_closed'
      : this.#sockets.size >= BRIDGE_MAX_CONNECTIONS
        ? 'bridge.connections_exhausted'
        : null;
    if (refusal !== null) {
      endSoon(socket, errorFrame(refusal));
      return;
    }
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    const reader = new FrameReader(BRIDGE_MAX_FRAME_BYTES);
    let authenticated = false;
    let ended = false;
    // Calls of one connection run, and are answered, in the order they arrived.
    let chain: Promise<void> = Promise.resolve();
    const send = (text: string) => {
      if (!socket.destroyed && socket.writable) socket.write(text);
    };
    const fail = (code: BridgeErrorCode) => {
      ended = true;
      socket.pause();
      chain = chain
        .then(() => {
          if (!socket.destroyed) endSoon(socket, errorFrame(code));
        })
        .catch(() => {
          socket.destroy();
        });
    };
    socket.on('data', (chunk: Buffer) => {
      if (ended) return;
      const { frames, tooLarge } = reader.push(chunk);
      for (const line of frames) {
        if (ended) return;
        const frame = parseFrame(line);
        if (!frame.ok) {
          fail('bridge.frame_malformed');
          return;
        }
        if (!authenticated) {
          const presented = frame.value.token;
          if (typeof presented !== 'string' || !tokensEqual(presented, this.#token)) {
            fail('bridge.token_invalid');
            return;
          }
          authenticated = true;
          continue;
        }
        const request = parseRequest(frame.value);
        if (request === null) {
          fail('bridge.request_invalid');
          return;
        }
        // § Call identity: the ordinal is the bridge's count, in arrival order across the turn.
        const ordinal = this.#counted;
        this.#counted += 1;
        // One call at a time per connection: the next starts when the previous is answered.
        chain = chain
          .then(async () => send(`${JSON.stringify(await this.#answer(ordinal, request.toolName, request.arguments))}\n`))
          // Nothing a connection does may reject unhandled: that would end the worker.
          .catch(() => {
            socket.destroy();
          });
      }
      if (tooLarge) fail('bridge.frame_too_large');
    });
  }

  async #answer(ordinal: number, toolName: string, args: unknown): Promise<unknown> {
    const callId = bridgeCallId(this.#turn.scriptHash, ordinal);
    if (ordinal >= this.#maximumCalls) return bridgeRefusal(callId, toolName, 'bridge.calls_exhausted');
    try {
      const answer = await this.#handler({ ordinal, callId, toolName, arguments: args }, this.#abort.signal);
      return checkedOutcome(answer, callId, toolName);
    } catch {
      // A handler's fault is the platform's, never the program's to read: no detail crosses.
      return bridgeRefusal(callId, toolName, 'tool.internal.bridge_handler');
    }
  }
}
