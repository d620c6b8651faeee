import { composeSystem, type ComposedSystem } from '@veetbot/composition';
import { OUTCOME_FIELDS } from '@veetbot/domain';
import { CALL_ID_META, CONTEXT_TRUST_META, RUN_HEADER } from '@veetbot/mcp-gateway';
import { connectGatewayClient } from '@veetbot/mcp-test-client';
import { openDatabase, type Database } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScene, type E2eScene } from '../src/e2e-processes';
import { ALL_STEPS } from './mcp-suite';

/**
 * Hard gate 11 for the MCP gateway face (docs/adr/0044): a call an MCP client makes through
 * /mcp takes the same fourteen steps, in the same order, as the same call submitted through
 * POST /v1/runs/{id}/steps — there is no second pipeline. mcp-gates-11-same-steps.test.ts
 * shows an MCP tool's call takes a builtin's steps; this shows the gateway face adds none.
 *
 * The REAL api process (`main.ts --api-only`) serves both faces; the one worker is composed in
 * this process (the same composition every worker uses, @veetbot/composition) with an observer
 * on its pipeline, so the steps each call traverses are recorded where they run. Two processes
 * on one database: PostgreSQL only (postgres-only.json).
 */
describe("Hard gate 11 — a gateway call takes the REST call's path (postgres)", () => {
  let scene: E2eScene;
  let database: Database;
  let worker: ComposedSystem;
  const steps: number[] = [];

  beforeAll(async () => {
    scene = await startScene({ workers: 0 });
    database = await openDatabase({ url: scene.url, poolSize: 4 });
    worker = await composeSystem({
      database,
      dataDir: scene.dataDir,
      mcp: false,
      sandbox: false,
      workerSettings: { pollIntervalMs: 100, sweepIntervalMs: 60_000 },
      pipelineHooks: { onStep: (n) => void steps.push(n) },
    });
    worker.worker.start();
  });
  afterAll(async () => {
    await worker?.close({ drainMs: 5000 });
    await database?.close();
    await scene?.close();
  });

  const rest = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${scene.baseUrl}${path}`, {
      method,
      headers: { Authorization: `Bearer ${scene.demoKey}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
    return (await response.json()) as Record<string, unknown>;
  };

  it('records the same step sequence for a call through /mcp as for the same call through the steps route', async () => {
    const session = await rest('POST', '/v1/sessions', { agent_id: 'gate-11' });
    const run = await rest('POST', '/v1/runs', { session_id: session.id, deadline_seconds: 600 });
    const runId = String(run.id);

    steps.length = 0;
    const viaRest = await rest('POST', `/v1/runs/${runId}/steps`, {
      step_number: 1,
      calls: [{ call_id: 'rest-1', tool_name: 'math.evaluate', arguments: { expression: '2 * (3 + 4)' }, context_trust: ['user'] }],
      wait_seconds: 30,
    });
    const restSteps = [...steps];

    steps.length = 0;
    const { client } = await connectGatewayClient({
      url: `${scene.baseUrl}/mcp`,
      headers: { Authorization: `Bearer ${scene.demoKey}`, [RUN_HEADER]: runId },
      era: 'modern',
    });
    const viaGateway = await client.callTool({
      name: 'math.evaluate',
      arguments: { expression: '2 * (3 + 4)' },
      _meta: { [CALL_ID_META]: 'mcp-1', [CONTEXT_TRUST_META]: ['user'] },
    });
    const gatewaySteps = [...steps];
    await client.close();

    // The comparison the gate names, whole; and it is the full pipeline, not two short ones.
    expect(gatewaySteps).toEqual(restSteps);
    expect(gatewaySteps).toEqual(ALL_STEPS);

    // The same outcome, both ways: the six fields, and the same rendered text.
    const restItem = (viaRest.items as { outcome: Record<string, unknown>; content: { text?: string }[] }[])[0]!;
    expect(viaGateway.structuredContent).toEqual(restItem.outcome);
    expect(Object.keys(viaGateway.structuredContent ?? {}).sort()).toEqual([...OUTCOME_FIELDS].sort());
    // (Each envelope's nonce is fresh, so it is the one part that differs.)
    const nonceless = (text: string | undefined) => text?.replaceAll(/nonce="[0-9a-f]{16}"/g, 'nonce=""');
    expect((viaGateway.content as { text: string }[]).map((c) => nonceless(c.text))).toEqual(
      restItem.content.map((c) => nonceless(c.text)),
    );

    // Both are rows of the one run: the gateway's call is step 2, recorded like step 1.
    const rows = (await rest('GET', `/v1/invocations?run_id=${runId}`)).invocations as Record<string, unknown>[];
    expect(rows.map((r) => [r.step_number, r.call_id, r.tool_name, r.status])).toEqual([
      [1, 'rest-1', 'math.evaluate', 'succeeded'],
      [2, 'mcp-1', 'math.evaluate', 'succeeded'],
    ]);
  });
});
