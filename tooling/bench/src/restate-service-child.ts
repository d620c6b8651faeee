import './promise-with-resolvers';
import { appendFile } from 'node:fs/promises';
import { createServer } from 'node:http2';

/**
 * The Restate peer's service (docs/adr/0073), in a process of its own as a deployment runs it: a
 * `@restatedev/restate-sdk` endpoint over HTTP/2 (h2c) on a port the system picks on 127.0.0.1.
 * One service, `bench`, one handler, `step`, whose body is one durable step: `ctx.run` appending
 * the line it was given to an outbox file (no fsync) — the same effect our one-call step of
 * `demo.external_write` has — and returning it. Prints `restate service listening on <port>`.
 * The SDK is imported after the polyfill (Node 20 has no Promise.withResolvers): dynamically, so
 * no import sorting can put it first.
 */
const outbox = process.env.BENCH_RESTATE_OUTBOX;
if (outbox === undefined || outbox === '') throw new Error('BENCH_RESTATE_OUTBOX is not set');

const restate = await import('@restatedev/restate-sdk');

const bench = restate.service({
  name: 'bench',
  handlers: {
    step: async (ctx: import('@restatedev/restate-sdk').Context, line: string): Promise<string> =>
      ctx.run('external_write', async () => {
        await appendFile(outbox, `${line}\n`);
        return line;
      }),
  },
});

const server = createServer(restate.createEndpointHandler({ services: [bench] }));
server.listen(0, '127.0.0.1', () => {
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  console.log(`restate service listening on ${port}`);
});
process.once('SIGTERM', () => {
  server.close();
  process.exit(0);
});
