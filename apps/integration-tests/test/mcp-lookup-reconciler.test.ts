import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpToolName } from '@veetbot/domain';
import type { ReconcileOutcome, Reconcilers } from '@veetbot/ports';
import { DedupServer } from '../src/dedup-server';
import { openMcpScene, type McpScene } from '../src/mcp-harness';
import { stopAllServers } from '../src/mcp-servers';
import { openTestDatabase, type TestDatabase } from '../src/test-database';

/**
 * Issue 25 item 3, the MCP lookup reconciler (docs/adr/0066), against servers/dedup-server.ts as
 * a real process that applies, crashes and lies. Each case: a call with a fresh key reaches the
 * server or not, and the server answers it, or dies before or after applying it (the worker's
 * view: UNCERTAIN); then the reconciler asks the server's lookup tool, whose answers carry a
 * fault each — honest, flipped, about another key, another shape, an extra field, an error
 * result, a JSON-RPC error, text only, or the process dying mid-lookup.
 *
 * The property: a call whose effect happened is never answered `not_applied`, and one whose
 * effect did not happen never `applied`; with both answers honest it is the truth. The one
 * liar left out is the coherent one (every answer flipped): asking cannot catch it (the ADR).
 * The reconciler never calls the original tool.
 */
const LOOKUP_FAULTS = ['honest', 'flip', 'wrong_key', 'bad_shape', 'extra_field', 'is_error', 'rpc_error', 'text_only', 'exit'] as const;
const FATES = ['not_sent', 'answer', 'exit_before_apply', 'exit_after_apply'] as const;
const TOOL = mcpToolName('dedup', 'create_ticket');

let database: TestDatabase;
let server: DedupServer;
let scene: McpScene;
let reconcilers: Reconcilers;
beforeAll(async () => {
  database = await openTestDatabase('pglite');
  server = await DedupServer.http();
  scene = await openMcpScene(database, {
    servers: [
      server.httpConfig('dedup', {
        idempotency: 'non_idempotent',
        tools: ['create_ticket'],
        lookupTool: { name: 'find_ticket', keyArgument: 'idempotency_key' },
        requestTimeoutSeconds: 5,
      }),
    ],
  });
  reconcilers = scene.adapter.lookupReconcilers();
}, 60_000);
afterAll(async () => {
  await scene?.close();
  await server?.dispose();
  await stopAllServers();
  await database?.close();
});

/** The call as a worker sends it: one tools/call POST carrying the key; the server may die on it. */
async function sendCall(key: string, title: string): Promise<void> {
  await fetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'idempotency-key': key },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'create_ticket', arguments: { title }, _meta: { 'io.veetbot/idempotency_key': key } },
    }),
  }).catch(() => undefined);
}

async function ensureRunning(): Promise<void> {
  // A process that exited (on purpose) is started again on the same port, the same state.
  await new Promise((resolve) => setTimeout(resolve, 20));
  if (!server.running) await server.start();
}

describe('the MCP lookup reconciler', () => {
  it('is composed for the listed tools of an operator server with a lookup tool, and not for the lookup itself', () => {
    expect(reconcilers.toolNames()).toEqual([TOOL]);
    expect(reconcilers.forTool(TOOL, 'any')?.name).toBe(TOOL);
    expect(reconcilers.forTool(mcpToolName('dedup', 'find_ticket'), 'any')).toBeNull();
  });

  it('never settles an applied call not_applied, nor an unapplied one applied, whatever the server does', async () => {
    const reconciler = reconcilers.forTool(TOOL, 'v')!;
    // Honest answers are common, so the truth is reached as often as the faults are refused.
    const faults = fc.oneof(
      { arbitrary: fc.constant('honest' as const), weight: 5 },
      { arbitrary: fc.constantFrom(...LOOKUP_FAULTS.filter((f) => f !== 'honest')), weight: 4 },
    );
    const seen = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...FATES),
        // At most one flipped answer: a server that flips every answer is the coherent liar.
        fc.tuple(faults, faults).filter(([a, b]) => !(a === 'flip' && b === 'flip')),
        async (fate, [first, second]) => {
          const key = randomBytes(32).toString('hex');
          const title = `case ${key.slice(0, 8)}`;
          if (fate !== 'not_sent') {
            await server.script({ create: fate });
            await sendCall(key, title);
            await ensureRunning();
          }
          await server.script({ lookups: [first, second] });
          const before = (await server.received()).filter((m) => m.tool === 'create_ticket').length;
          let outcome: ReconcileOutcome | 'error';
          let evidence = '';
          try {
            const answer = await reconciler.reconcile({
              tenantId: scene.tenantId,
              runId: scene.runId,
              invocationId: globalThis.crypto.randomUUID(),
              toolName: TOOL,
              toolVersion: 'v',
              idempotencyKey: key,
              arguments: { title },
              watermarkAt: new Date(),
              workspace: async () => null,
              signal: AbortSignal.timeout(15_000),
            });
            outcome = answer.outcome;
            evidence = answer.evidence;
          } catch {
            outcome = 'error';
          }
          await ensureRunning();
          const applied = (await server.effects()).some((e) => e.key === key);
          seen.add(`${applied}:${outcome}`);
          if (applied) expect(outcome, `${fate} ${first} ${second}`).not.toBe('not_applied');
          else expect(outcome, `${fate} ${first} ${second}`).not.toBe('applied');
          if (first === 'honest' && second === 'honest') expect(outcome).toBe(applied ? 'applied' : 'not_applied');
          // Our own words only: nothing the server said reaches the evidence.
          expect(evidence).not.toMatch(/ignore previous|backend down|lookup failed/);
          // The lookup never re-executes: no tools/call of the original tool was added.
          expect((await server.received()).filter((m) => m.tool === 'create_ticket')).toHaveLength(before);
        },
      ),
      { numRuns: 30, seed: Number(process.env.FC_SEED ?? Date.now() % 2 ** 31) },
    );
    // The run really saw both truths settled, and the faults refused.
    expect([...seen]).toEqual(expect.arrayContaining(['true:applied', 'false:not_applied', 'true:unknown']));
  }, 240_000);

  it("the lookup carries no idempotency key of its own: a deduplicating server cannot answer it with the call's cached result", async () => {
    const key = randomBytes(32).toString('hex');
    await server.script({ create: 'answer' });
    await sendCall(key, 'cached');
    await server.script({});
    const answer = await reconcilers.forTool(TOOL, 'v')!.reconcile({
      tenantId: scene.tenantId,
      runId: scene.runId,
      invocationId: globalThis.crypto.randomUUID(),
      toolName: TOOL,
      toolVersion: 'v',
      idempotencyKey: key,
      arguments: { title: 'cached' },
      watermarkAt: new Date(),
      workspace: async () => null,
      signal: AbortSignal.timeout(15_000),
    });
    expect(answer).toEqual({ outcome: 'applied', evidence: expect.stringContaining('both answers were applied') });
    const lookups = (await server.received()).filter((m) => m.tool === 'find_ticket').slice(-2);
    expect(lookups.map((m) => ({ args: m.arguments, meta: m.meta_key, header: m.header_key }))).toEqual([
      { args: { idempotency_key: key }, meta: null, header: null },
      { args: { idempotency_key: key }, meta: null, header: null },
    ]);
  });
});
