import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of a server, controlled by the test (docs/adr/0067): `cut()` makes the
 * server unreachable without restarting it.
 * - `reset`: every open connection is destroyed and every new one is accepted and closed at
 *   once (a refused or reset connection: the client learns it quickly).
 * - `blackhole`: every open connection is destroyed and every new one is accepted and then
 *   never answered (a partition: a client without its own connect timeout waits forever).
 * `restore()` forwards again; connections held by the blackhole are dropped then.
 */
export interface TcpProxy {
  readonly port: number;
  readonly state: 'open' | 'reset' | 'blackhole';
  /** Connections forwarded since start. */
  readonly forwarded: number;
  cut(mode?: 'reset' | 'blackhole'): void;
  restore(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  let state: TcpProxy['state'] = 'open';
  let forwarded = 0;
  const live = new Set<Socket>();
  const held = new Set<Socket>();
  const track = (socket: Socket, set: Set<Socket>) => {
    set.add(socket);
    socket.once('close', () => set.delete(socket));
    // A reset from either side is expected here; an unhandled 'error' would crash the caller.
    socket.on('error', () => undefined);
  };
  const server: Server = createServer((client) => {
    client.on('error', () => undefined);
    if (state === 'reset') {
      client.destroy();
      return;
    }
    if (state === 'blackhole') {
      track(client, held);
      client.pause();
      return;
    }
    forwarded++;
    const upstream = connect(target.port, target.host);
    track(client, live);
    track(upstream, live);
    client.pipe(upstream);
    upstream.pipe(client);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.once('close', end);
    upstream.once('close', end);
  });
  await new Promise<void>((done, fail) => {
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => done());
  });
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  const destroyAll = (set: Set<Socket>) => {
    for (const socket of [...set]) socket.destroy();
    set.clear();
  };
  return {
    port,
    get state() {
      return state;
    },
    get forwarded() {
      return forwarded;
    },
    cut(mode = 'reset') {
      state = mode;
      destroyAll(live);
    },
    restore() {
      state = 'open';
      destroyAll(held);
    },
    async close() {
      destroyAll(live);
      destroyAll(held);
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
}
