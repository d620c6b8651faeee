import { VeetbotClient, type Session } from '@veetbot/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbeddedScene, startScene, workerOperationsUrl, type Started } from '../src/e2e-processes';
import { EXPECTED_OUTCOMES, HOSTILE_SCENARIOS, type ExpectedOutcome } from '../src/hostile-scenarios';
import { HostileHttpServer } from '../src/mcp-servers';

/**
 * Issue 10 item 7, the worker half (ADR 0021), on the product's own processes: with
 * DATABASE_URL, the api (`apps/api/src/main.ts --api-only`) and the worker (`apps/worker/src/
 * main.ts`, `pnpm start:worker`) on a fresh PostgreSQL database, started as the README starts
 * them (src/e2e-processes.ts); without it, `pnpm start`'s one process (role `both`) on PGlite.
 * The operator file's `mcp.tenant_egress` lets tenant servers on 127.0.0.1 be dialled over plain
 * http (ADR 0022). The tenant registers, through the API, a read-only and a non-idempotent
 * server for every scenario of servers/hostile-http-server.ts, opens one session (the api
 * dials them all) and makes one call per server (the worker dials them). Neither process has an
 * 'uncaughtException' handler: after each call the worker still answers /healthz on its own
 * port, the item carries ADR 0021's outcome and reason code, and afterwards a normal call still
 * succeeds. Before the fix, the process that prepared the session died on the 404 GET stream.
 */

let hostile: HostileHttpServer;
let client: VeetbotClient;
let session: Session;
/** The process that runs the worker loop, and where its /healthz answers. */
let worker: Started;
let workerBase: string;
/** Every product process of the scene (the api and the worker, or the one `both` process). */
let processes: Started[];
let close: () => Promise<void>;

const OPERATOR_CONFIG = {
  mcp: { servers: [], tenant_egress: { allow_http: true, allow_private_addresses: true, allow_hosts: ['127.0.0.1'] } },
};

beforeAll(async () => {
  hostile = await HostileHttpServer.start();
  if (process.env.DATABASE_URL) {
    const scene = await startScene({ workers: 1, operatorConfig: OPERATOR_CONFIG });
    close = scene.close;
    worker = scene.workers[0]!;
    workerBase = workerOperationsUrl(worker);
    processes = [scene.api, worker];
    client = new VeetbotClient({ baseUrl: scene.baseUrl, apiKey: scene.demoKey });
  } else {
    const scene = await startEmbeddedScene({ operatorConfig: OPERATOR_CONFIG });
    close = scene.close;
    worker = scene.process;
    workerBase = scene.baseUrl;
    processes = [worker];
    client = new VeetbotClient({ baseUrl: scene.baseUrl, apiKey: scene.demoKey });
  }
  // Short timeouts: the slow and silent scenarios end by the call's own timeout.
  for (const scenario of HOSTILE_SCENARIOS) {
    const common = {
      transport: 'http',
      endpoint: hostile.url(scenario),
      auth_scheme: 'none',
      timeout_seconds: 3,
      maximum_output_bytes: 64 * 1024,
    } as const;
    await client.createMcpServer({
      server_id: `r_${scenario}`,
      ...common,
      side_effect: 'external_read',
      risk: 'low',
      idempotency: 'read_only',
    });
    await client.createMcpServer({
      server_id: `w_${scenario}`,
      ...common,
      side_effect: 'external_write',
      risk: 'medium',
      idempotency: 'non_idempotent',
    });
  }
  session = await client.openSession({ agent_id: 'hostile-agent' });
}, 180_000);

afterAll(async () => {
  await close?.();
  await hostile?.stop();
});

interface CallOutcome {
  readonly status: string;
  readonly reason_code: string;
  readonly row_status: string | undefined;
}

/** One governed call to `mcp.{serverId}.echo`, in a run of its own, through the API. */
async function call(serverId: string): Promise<CallOutcome> {
  const run = await client.createRun({ session_id: session.id, deadline_seconds: 600 });
  const step = await client.submitStepAndWait(run.id, {
    step_number: 1,
    calls: [{ call_id: 'c1', tool_name: `mcp.${serverId}.echo`, arguments: { text: 'hi' }, context_trust: ['user'] }],
  });
  expect(step.status, JSON.stringify(step)).toBe('completed');
  expect(step.items, JSON.stringify(step)).toHaveLength(1);
  const item = step.items[0]!;
  const rows = (await client.listInvocations({ run_id: run.id })).invocations;
  return { status: item.outcome.status, reason_code: item.outcome.reason_code, row_status: rows[0]?.status };
}

async function expectAlive(): Promise<void> {
  for (const p of processes) {
    expect(p.child.exitCode, p.output()).toBeNull();
    expect(p.child.signalCode, p.output()).toBeNull();
  }
  const health = await fetch(`${workerBase}/healthz`);
  expect(health.status).toBe(200);
  expect(await health.json()).toEqual({ status: 'ok' });
}

/** The invocation row's status is the outcome's, except unavailable, which is recorded FAILED. */
const rowStatus = (expected: ExpectedOutcome): string => (expected.status === 'unavailable' ? 'failed' : expected.status);

describe('the product’s worker calling a hostile tenant HTTP server survives every misbehaviour', () => {
  it('opening the session: a 404 on the GET stream and a 200 body to a notification are not errors; a connect-time failure costs only that server', async () => {
    await expectAlive();
    const prepared = session.mcp_servers ?? [];
    expect(prepared).toHaveLength(HOSTILE_SCENARIOS.length * 2);
    for (const scenario of HOSTILE_SCENARIOS) {
      for (const prefix of ['r', 'w']) {
        const id = `${prefix}_${scenario}`;
        const found = prepared.find((p) => p.server_id === id);
        expect(found && { status: found.status, reason_code: found.reason_code }, id).toEqual(EXPECTED_OUTCOMES[scenario].connect);
      }
    }
  });

  for (const scenario of HOSTILE_SCENARIOS) {
    for (const classification of ['readOnly', 'write'] as const) {
      const expected = EXPECTED_OUTCOMES[scenario][classification];
      it(`${scenario} (${classification}): ${expected.status} ${expected.reason_code}, and the worker lives on`, async () => {
        const outcome = await call(`${classification === 'readOnly' ? 'r' : 'w'}_${scenario}`);
        expect(outcome).toEqual({ status: expected.status, reason_code: expected.reason_code, row_status: rowStatus(expected) });
        await expectAlive();
      });
    }
  }

  it('after all of them: a normal call succeeds, failed servers are dialled again, nothing reached the redirect target, nothing was thrown at a process', async () => {
    expect(await call('r_well_behaved')).toMatchObject({ status: 'succeeded', reason_code: 'tool.ok' });
    expect(await call('w_well_behaved')).toMatchObject({ status: 'succeeded', reason_code: 'tool.ok' });
    // The servers whose calls failed reconnect for the next one.
    expect(await call('r_cut_json')).toMatchObject({ status: 'unavailable', reason_code: 'tool.server_unreachable' });
    expect(await call('r_too_large_sse')).toMatchObject({ status: 'failed', reason_code: 'tool.output_too_large.mcp_response' });
    await expectAlive();
    // The calls ran in the worker: its own /metrics counts them (r_cut_json twice).
    const metrics = await (await fetch(`${workerBase}/metrics`)).text();
    // docs/adr/0055: every server here is a tenant's: counted under `tenant_server`, never by its id.
    const count = (status: string) =>
      Number(
        new RegExp(`^tool_calls_total\\{name="tenant_server",source="mcp",outcome_status="${status}"\\} (\\d+)$`, 'm').exec(metrics)?.[1] ??
          0,
      );
    expect(count('unavailable')).toBeGreaterThanOrEqual(2);
    expect(count('uncertain')).toBeGreaterThanOrEqual(1);
    expect(metrics).not.toMatch(/r_cut_json|w_slow_body|r_well_behaved/);
    expect(await hostile.elsewhereHits()).toBe(0);
    for (const p of processes) expect(p.output()).not.toMatch(/ERR_INVALID_STATE|Uncaught|TypeError|^\s+at /m);
  });
});
