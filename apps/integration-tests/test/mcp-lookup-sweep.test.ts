import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { mcpToolName } from '@veetbot/domain';
import { composeReconcilers } from '@veetbot/runtime';
import { createApiStores } from '@veetbot/store-postgres';
import { createBuiltinReconcilers } from '@veetbot/tools-builtin';
import { composeCrashWorld, crashFolders } from '../src/crash-world';
import { DedupServer } from '../src/dedup-server';
import { drivers } from '../src/test-database';
import { expectOutcome, useMcpSuite } from './mcp-suite';

/**
 * Issue 25 items 3 and 4 for MCP (docs/adr/0066, 0063): a NON_IDEMPOTENT call to a real server
 * process (servers/dedup-server.ts) that dies on it — before applying it, and after — ends
 * UNCERTAIN; the recovery sweep, with the builtins' reconcilers and the operator server's lookup
 * reconciler composed as the composition root composes them, settles each as its review:
 * `not_applied` and `succeeded`, the evidence as the note, `reviewed_by` naming the reconciler.
 * The original tool is never called again.
 */
const TOOL = mcpToolName('dedup', 'create_ticket');
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0)) await step();
});

describe.each(drivers())('the sweep settles an UNCERTAIN MCP call through the server lookup tool (%s)', (driver) => {
  const suite = useMcpSuite(driver);

  it('dies before applying: not_applied; dies after applying: succeeded; both with the lookup as evidence', async () => {
    const server = await DedupServer.http();
    cleanup.push(() => server.dispose());
    const root = await mkdtemp(path.join(tmpdir(), 'veetbot-lookup-sweep-'));
    cleanup.push(() => rm(root, { recursive: true, force: true }));
    const scene = await suite.open({
      servers: [
        server.httpConfig('dedup', {
          idempotency: 'non_idempotent',
          tools: ['create_ticket'],
          lookupTool: { name: 'find_ticket', keyArgument: 'idempotency_key' },
        }),
      ],
    });

    const rows = [];
    for (const fate of ['exit_before_apply', 'exit_after_apply'] as const) {
      await server.script({ create: fate });
      const { item, row } = await scene.run(TOOL, { title: fate });
      // The connection dropped after the call went out (Decision 26).
      expectOutcome(item, 'uncertain', 'tool.outcome_unknown');
      rows.push(row);
      await server.start();
      await server.script({});
    }
    const [before, after] = rows as [(typeof rows)[0], (typeof rows)[0]];
    expect((await server.effects()).map((e) => e.key)).toEqual([after.idempotencyKey]);

    const sweeper = composeCrashWorld({
      stores: scene.stores,
      owner: 'sweeper',
      folders: crashFolders(root),
      clock: scene.clock,
      reconcilers: composeReconcilers(scene.adapter.lookupReconcilers(), createBuiltinReconcilers()),
    });
    const report = await sweeper.runtime.sweep();
    expect(report.reconciled).toMatchObject({ examined: 2, settled: 2 });

    const reviews = createApiStores(suite.database().database).reviews;
    expect(await reviews.getByInvocation(scene.tenantId, before.id)).toMatchObject({
      resolution: 'not_applied',
      reviewedBy: `reconciler:${TOOL}`,
      note: expect.stringContaining('both answers were not_applied'),
    });
    expect(await reviews.getByInvocation(scene.tenantId, after.id)).toMatchObject({
      resolution: 'succeeded',
      reviewedBy: `reconciler:${TOOL}`,
      note: expect.stringContaining('both answers were applied'),
    });
    // Asked by the lookup only: the two original calls and four lookups, nothing re-sent.
    const calls = (await server.received()).filter((m) => m.method === 'tools/call').map((m) => m.tool);
    expect(calls.filter((t) => t === 'create_ticket')).toHaveLength(2);
    expect(calls.filter((t) => t === 'find_ticket')).toHaveLength(4);
  });
});
