import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPECTED_OUTCOMES, HOSTILE_SCENARIOS, type ExpectedOutcome } from '../src/hostile-scenarios';
import { HostileHttpServer, launchScript } from '../src/mcp-servers';

/**
 * Issue 10 item 7, the worker half (ADR 0021): a long-lived process making governed MCP calls
 * (src/mcp-worker-child.ts: the fourteen-step pipeline and the real McpAdapter over a real
 * database, with no uncaughtException handler) calls a tenant HTTP server that misbehaves in
 * every way servers/hostile-http-server.ts knows. It survives every one — still answering
 * /healthz and the next call — and each call ends with ADR 0021's outcome and reason code.
 * Before the fix, the process died while preparing the session (404 on the GET stream).
 */

const CHILD = join(import.meta.dirname, '../src/mcp-worker-child.ts');

let server: HostileHttpServer;
let child: ChildProcess;
let childStderr: () => string;
let base: string;
let prepared: { server: string; status: string; reason_code: string | null }[];

beforeAll(async () => {
  server = await HostileHttpServer.start();
  const env: Record<string, string> = process.env['DATABASE_URL'] ? { DATABASE_URL: process.env['DATABASE_URL'] } : {};
  const started = await launchScript(CHILD, [String(server.port)], env);
  child = started.child;
  childStderr = started.stderr;
  base = `http://127.0.0.1:${started.ready['port'] as number}`;
  prepared = started.ready['servers'] as typeof prepared;
}, 120_000);
afterAll(async () => {
  child?.kill('SIGTERM');
  await server?.stop();
});

async function call(serverId: string): Promise<{ status: string; reason_code: string; row_status: string }> {
  const response = await fetch(`${base}/call`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ server: serverId, arguments: { text: 'hi' } }) });
  expect(response.status).toBe(200);
  return (await response.json()) as { status: string; reason_code: string; row_status: string };
}

async function expectAlive(): Promise<void> {
  expect(child.exitCode).toBeNull();
  expect(child.signalCode).toBeNull();
  const health = await fetch(`${base}/healthz`);
  expect(await health.json()).toEqual({ status: 'ok', pid: child.pid });
}

/** The invocation row's status is the outcome's, except unavailable, which is recorded FAILED. */
const rowStatus = (expected: ExpectedOutcome): string => (expected.status === 'unavailable' ? 'failed' : expected.status);

describe('a worker process calling a hostile tenant HTTP server survives every misbehaviour', () => {
  it('preparing the session: a 404 on the GET stream and a 200 body to a notification are not errors; a connect-time failure costs only that server', async () => {
    await expectAlive();
    expect(prepared).toHaveLength(HOSTILE_SCENARIOS.length * 2);
    for (const scenario of HOSTILE_SCENARIOS) {
      for (const prefix of ['r', 'w']) expect(prepared.find((p) => p.server === `${prefix}_${scenario}`), `${prefix}_${scenario}`).toEqual({ server: `${prefix}_${scenario}`, ...EXPECTED_OUTCOMES[scenario].connect });
    }
  });

  for (const scenario of HOSTILE_SCENARIOS) {
    for (const classification of ['readOnly', 'write'] as const) {
      it(`${scenario} (${classification}): ${EXPECTED_OUTCOMES[scenario][classification].status} ${EXPECTED_OUTCOMES[scenario][classification].reason_code}, and the process lives on`, async () => {
        const expected = EXPECTED_OUTCOMES[scenario][classification];
        const outcome = await call(`${classification === 'readOnly' ? 'r' : 'w'}_${scenario}`);
        expect(outcome).toEqual({ status: expected.status, reason_code: expected.reason_code, row_status: rowStatus(expected) });
        await expectAlive();
      });
    }
  }

  it('after all of them: the next call succeeds, nothing reached the redirect target, nothing was thrown at the process', async () => {
    expect(await call('r_well_behaved')).toMatchObject({ status: 'succeeded', reason_code: 'tool.ok' });
    // The servers whose calls failed reconnect for the next one.
    expect(await call('r_cut_json')).toMatchObject({ status: 'unavailable', reason_code: 'tool.server_unreachable' });
    expect(await call('r_too_large_sse')).toMatchObject({ status: 'failed', reason_code: 'tool.output_too_large.mcp_response' });
    await expectAlive();
    expect(await server.elsewhereHits()).toBe(0);
    expect(childStderr()).not.toMatch(/ERR_INVALID_STATE|Uncaught|TypeError|^\s+at /m);
  });
});
