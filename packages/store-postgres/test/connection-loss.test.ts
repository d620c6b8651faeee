import { connect, createServer, type Server, type Socket } from 'node:net';
import { StoreError } from '@veetbot/domain';
import { sql } from 'drizzle-orm';
import { afterEach, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/database';

/**
 * docs/adr/0067, on the real PostgreSQL at DATABASE_URL reached through a TCP relay this test
 * owns: a connection dropped while a transaction holds it (between two statements, where a
 * worker runs a step's work) must fail that transaction as store.connection — not kill the
 * process with an uncaught 'error' event, as it did — and the pool must serve the next
 * transaction on a new connection.
 */
const target = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((done) => s.close(done))));
});

async function listen(onConnection: (socket: Socket) => void): Promise<{ port: number; sockets: Set<Socket> }> {
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('close', () => sockets.delete(socket));
    onConnection(socket);
  });
  servers.push(server);
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  return { port: typeof address === 'object' && address !== null ? address.port : 0, sockets };
}

/** Forwards to the real server; `drop()` destroys every relayed connection, both ends. */
async function relay(): Promise<{ url: string; drop: () => void }> {
  const upstreams = new Set<Socket>();
  const { port, sockets } = await listen((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    upstream.on('error', () => undefined);
    upstreams.add(upstream);
    client.pipe(upstream).pipe(client);
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
  });
  const url = new URL(target);
  url.port = String(port);
  return {
    url: url.toString(),
    drop: () => {
      for (const s of [...sockets, ...upstreams]) s.destroy();
    },
  };
}

describe('a lost connection (docs/adr/0067)', () => {
  it('dropped inside a transaction, between statements: that transaction fails store.connection, the process lives, the next one reconnects', async () => {
    const { url, drop } = await relay();
    const database = await openDatabase({ url, poolSize: 1 });
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      const failed = database.transaction({ role: 'owner' }, async (tx) => {
        await tx.execute(sql`select 1`);
        drop();
        // The step's work between two statements: the socket's close arrives meanwhile.
        await new Promise((r) => setTimeout(r, 300));
        await tx.execute(sql`select 2`);
      });
      await expect(failed).rejects.toSatisfy((e: unknown) => StoreError.isInstance(e) && e.code === 'store.connection' && e.retryable);
      expect(uncaught).toEqual([]);
      // The same pool of one serves the next transaction on a fresh connection.
      const rows = await database.transaction({ role: 'owner' }, (tx) => tx.execute(sql`select 41 + 1 as n`));
      expect((rows as unknown as { rows: { n: number }[] }).rows[0]?.n).toBe(42);
    } finally {
      process.off('uncaughtException', onUncaught);
      await database.close();
    }
  });
});
