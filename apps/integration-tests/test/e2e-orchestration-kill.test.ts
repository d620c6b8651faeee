import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { VeetbotClient } from '@veetbot/client';
import { bridgeCallId } from '@veetbot/domain';
import { createStores, openDatabase } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScene, until, type E2eScene } from '../src/e2e-processes';

const DEMO_TENANT_ID = 'demo';
const LEASE_TTL_MS = 3_000;
const SWEEP_MS = 1_000;

/*
 * § The programmatic orchestration bridge (docs/adr/0039): the real api and worker processes on
 * PostgreSQL, the real sandbox and node. A program makes one call, then waits; the worker running
 * it is SIGKILLed mid-turn. No process of the sandbox survives it (bubblewrap's
 * --die-with-parent; found by the script hash every program carries in its argv), and a new
 * worker recovers the step like any other: the orchestration is re-executed (idempotent), the
 * earlier call deduplicates at step 8, and the program finishes.
 */
let scene: E2eScene;

beforeAll(async () => {
  scene = await startScene({
    workers: 0,
    workerEnv: { VEETBOT_LEASE_TTL_MS: String(LEASE_TTL_MS), VEETBOT_WORKER_SWEEP_MS: String(SWEEP_MS) },
  });
}, 120_000);

afterAll(async () => {
  await scene?.close();
});

/** Host processes whose command line holds `needle` (pgrep -f); none is an empty list. */
function processesHolding(needle: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', needle], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line !== '' && Number(line) !== process.pid);
  } catch {
    // pgrep exits 1 when nothing matches.
    return [];
  }
}

async function readLog(runId: string) {
  const database = await openDatabase({ url: scene.url, poolSize: 1 });
  try {
    const stores = createStores(database);
    const rows = await stores.invocations.listForRun(DEMO_TENANT_ID, runId);
    const events = await stores.events.listAfter(DEMO_TENANT_ID, runId, 0, 1_000);
    return { rows, events };
  } finally {
    await database.close();
  }
}

describe('an orchestration whose worker is killed mid-turn', () => {
  it('leaves no sandbox process behind, and the step recovers with the earlier call deduplicated', async () => {
    const first = await scene.startWorker();
    const client = new VeetbotClient({ baseUrl: scene.baseUrl, apiKey: scene.demoKey });
    const session = await client.openSession({
      agent_id: 'orchestration-kill',
      enabled_tools: ['sandbox.run_orchestration', 'math.evaluate'],
    });
    expect(session.tools.map((t) => t.name).sort()).toEqual(['math.evaluate', 'sandbox.run_orchestration']);
    const run = await client.createRun({ session_id: session.id, deadline_seconds: 3_600 });
    // The first run of the program waits (for a kill); the recovered one finds its mark and ends.
    // Both make the same call first, so its call id — and its key — are the same.
    const source = [
      "import { existsSync, writeFileSync } from 'node:fs';",
      "import { tools } from '/opt/veetbot/veetbot-tools.mjs';",
      "const item = await tools.call('math.evaluate', { expression: '6 * 7' });",
      "console.log('answer', item.outcome.status, item.content.map((p) => p.text).join(''));",
      "if (!existsSync('/workspace/first-run')) {",
      "  writeFileSync('/workspace/first-run', 'x');",
      '  await new Promise((resolve) => setTimeout(resolve, 600_000));',
      '}',
      "console.log('finished');",
    ].join('\n');
    const scriptHash = createHash('sha256').update(source, 'utf8').digest('hex');
    const mathCallId = bridgeCallId(scriptHash, 0);
    const step = {
      step_number: 1,
      calls: [
        {
          call_id: 'orchestrate',
          tool_name: 'sandbox.run_orchestration',
          arguments: { language: 'javascript', source },
          context_trust: ['user' as const],
        },
      ],
      wait_seconds: 0,
    };
    await client.submitStep(run.id, step);

    // Mid-turn: the call answered, the program waiting inside the sandbox.
    await until(
      () => readLog(run.id),
      (log) => log.rows.some((r) => r.callId === mathCallId && r.status === 'succeeded'),
      60_000,
      'the bridge call recorded',
    );
    await until(
      async () => processesHolding(scriptHash),
      (found) => found.length > 0,
      30_000,
      'the program running',
    );

    first.child.kill('SIGKILL');
    expect(await first.exited).toEqual({ code: null, signal: 'SIGKILL' });
    // No orphan: bubblewrap dies with its parent and takes the program's namespace with it.
    await until(
      async () => processesHolding(scriptHash),
      (found) => found.length === 0,
      30_000,
      'every sandbox process gone',
    );

    // A new worker recovers the step like any other (the lease expires; the sweep re-executes).
    const second = await scene.startWorker();
    const recovered = await until(
      () => readLog(run.id),
      (log) => log.rows.some((r) => r.callId === 'orchestrate' && r.status === 'succeeded'),
      90_000,
      'the orchestration recovered',
    );
    const orchestration = recovered.rows.find((r) => r.callId === 'orchestrate');
    expect(orchestration).toMatchObject({ status: 'succeeded', attemptNumber: 2, idempotencyClass: 'idempotent' });
    // The earlier call ran once: one row, one start.
    expect(recovered.rows.filter((r) => r.callId === mathCallId)).toHaveLength(1);
    expect(recovered.events.filter((e) => e.type === 'tool.call.started' && e.payload.call_id === mathCallId)).toHaveLength(1);
    expect(recovered.events.filter((e) => e.type === 'bridge.session.opened')).toHaveLength(2);

    const outcome = await client.submitStepAndWait(run.id, { ...step, wait_seconds: 20 }, { timeoutMs: 60_000 });
    expect(outcome.status).toBe('completed');
    const text = outcome.items[0]?.content.map((p) => (p.type === 'text' ? p.text : '')).join('') ?? '';
    expect(text).toContain('answer succeeded');
    expect(text).toContain('finished');
    expect(second.child.exitCode).toBeNull();
    expect(processesHolding(scriptHash)).toEqual([]);
  }, 240_000);
});
