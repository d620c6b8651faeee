import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpToolName } from '@veetbot/domain';
import { DedupServer } from '../src/dedup-server';
import { openMcpScene, textParts } from '../src/mcp-harness';
import { stopAllServers, TSX_LOADER_URL, waitFor } from '../src/mcp-servers';
import { LEASE_TTL_MS, T0 } from '../src/pipeline-harness';
import { openTestDatabase, type TestDatabase } from '../src/test-database';

/**
 * Issue 25 item 2: § The effect watermark's table, row CONDITIONALLY_IDEMPOTENT / set: "replay
 * with the same key". A REAL worker process (mcp-replay-child.ts) calls create_ticket on
 * servers/dedup-server.ts, which applies the effect and holds its answer; the worker is SIGKILLed
 * after the watermark and before the answer. A second worker takes the expired lease over and
 * the same call is replayed with the same key in `_meta` and the Idempotency-Key header (over
 * HTTP; in `_meta` over stdio, the server respawned) — and the server's deduplication makes it
 * one effect, the replay answered with the first ticket. The NON_IDEMPOTENT twin of the same
 * crash stays UNCERTAIN and is never re-sent.
 */
const CHILD = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'src', 'mcp-replay-child.ts');

let database: TestDatabase;
beforeAll(async () => {
  database = await openTestDatabase('postgres');
}, 60_000);
afterAll(async () => {
  await stopAllServers();
  await database?.close();
});

interface Started {
  tenantId: string;
  sessionId: string;
  runId: string;
  callId: string;
  stepNumber: number;
  status: string;
}

/** Starts the worker on one call; resolves with its identity line, and its exit. */
function worker(server: object, toolName: string, args: Record<string, unknown>) {
  const child = spawn(
    process.execPath,
    ['--import', TSX_LOADER_URL, CHILD, JSON.stringify({ databaseUrl: database.url, server, toolName, arguments: args })],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  const started = new Promise<Started>((resolve, reject) => {
    let buffered = '';
    child.stdout.on('data', (c: Buffer) => {
      buffered += c.toString('utf8');
      const newline = buffered.indexOf('\n');
      if (newline >= 0) resolve(JSON.parse(buffered.slice(0, newline)) as Started);
    });
    void exited.then(() => reject(new Error(`the worker exited before it started: ${stderr}`)));
  });
  return { child, started, exited, stderr: () => stderr };
}

describe('a conditionally idempotent MCP call whose worker was SIGKILLed after the watermark', () => {
  it.each(['http', 'stdio'] as const)(
    'over %s: a second worker replays it with the same key; the server makes it one effect',
    async (transport) => {
      const server = transport === 'http' ? await DedupServer.http() : await DedupServer.stdio();
      try {
        const config = transport === 'http' ? server.httpConfig('dedup') : server.stdioConfig('dedup');
        await server.script({ create: 'hold' });
        const tool = mcpToolName('dedup', 'create_ticket');
        const w = worker(config, tool, { title: 'exactly once' });
        const ids = await w.started;
        expect(ids.status).toBe('connected');
        // The server applied the effect and holds its answer: the worker is past its watermark.
        await waitFor(async () => (await server.effects()).length === 1, 30_000, 'the effect');
        w.child.kill('SIGKILL');
        expect(await w.exited, w.stderr()).toEqual({ code: null, signal: 'SIGKILL' });

        const [dead] = await database.stores.invocations.listForRun(ids.tenantId, ids.runId);
        expect(dead).toMatchObject({ status: 'running', idempotencyClass: 'conditionally_idempotent', attemptNumber: 1 });
        expect(dead!.effectSentAt).not.toBeNull();
        const key = dead!.idempotencyKey;

        // The server answers again (a stdio server was killed with its worker: the adapter respawns it).
        await server.script({ create: 'answer' });
        const recovery = await openMcpScene(database, {
          servers: [config],
          attach: { tenantId: ids.tenantId, sessionId: ids.sessionId, runId: ids.runId },
          owner: 'worker-recovery',
          startAt: new Date(T0.getTime() + LEASE_TTL_MS + 1_000),
        });
        try {
          const result = await recovery.execute(
            recovery.call(tool, { title: 'exactly once' }, { callId: ids.callId, stepNumber: ids.stepNumber }),
          );
          expect(result.kind).toBe('concluded');
          if (result.kind !== 'concluded') return;
          expect(result.item.outcome).toMatchObject({ status: 'succeeded', reason_code: 'tool.ok' });
          // The replay was answered from the server's record of the first call.
          expect(textParts(result.item).map((p) => p.text)).toEqual([expect.stringContaining('ticket 1')]);
        } finally {
          await recovery.close();
        }
        const [row] = await database.stores.invocations.listForRun(ids.tenantId, ids.runId);
        expect(row).toMatchObject({ id: dead!.id, status: 'succeeded', attemptNumber: 2, idempotencyKey: key });

        const calls = (await server.received()).filter((m) => m.method === 'tools/call');
        expect(calls.map((m) => ({ meta: m.meta_key, header: m.header_key }))).toEqual([
          { meta: key, header: transport === 'http' ? key : null },
          { meta: key, header: transport === 'http' ? key : null },
        ]);
        expect(await server.effects()).toEqual([{ key, title: 'exactly once', ticket: 1 }]);
      } finally {
        await server.dispose();
      }
    },
  );

  it('the NON_IDEMPOTENT twin stays UNCERTAIN and is never re-sent', async () => {
    const server = await DedupServer.http();
    try {
      const config = server.httpConfig('dedupw', { idempotency: 'non_idempotent' });
      await server.script({ create: 'hold' });
      const tool = mcpToolName('dedupw', 'create_ticket');
      const w = worker(config, tool, { title: 'maybe once' });
      const ids = await w.started;
      await waitFor(async () => (await server.effects()).length === 1, 30_000, 'the effect');
      w.child.kill('SIGKILL');
      await w.exited;
      await server.script({ create: 'answer' });
      const recovery = await openMcpScene(database, {
        servers: [config],
        attach: { tenantId: ids.tenantId, sessionId: ids.sessionId, runId: ids.runId },
        owner: 'worker-recovery',
        startAt: new Date(T0.getTime() + LEASE_TTL_MS + 1_000),
      });
      try {
        const result = await recovery.execute(
          recovery.call(tool, { title: 'maybe once' }, { callId: ids.callId, stepNumber: ids.stepNumber }),
        );
        expect(result.kind === 'concluded' && result.item.outcome).toMatchObject({
          status: 'uncertain',
          reason_code: 'tool.outcome_unknown',
        });
      } finally {
        await recovery.close();
      }
      expect((await server.received()).filter((m) => m.method === 'tools/call')).toHaveLength(1);
    } finally {
      await server.dispose();
    }
  });
});
