import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO } from '../src/e2e-processes';
import { EXPECTED_OUTCOMES, HOSTILE_SCENARIOS, type HostileScenario } from '../src/hostile-scenarios';
import { HostileHttpServer, TSX_LOADER_URL } from '../src/mcp-servers';

/**
 * Issue 10 item 7, the CLI half (ADR 0021): `veetbot mcp check --url …` run as a real child
 * process against each misbehaviour of servers/hostile-http-server.ts ends with its normal
 * status (0, or 1 with a reason code) — never an uncaught exception. Before the fix, the
 * 404-on-GET and 200-on-notification scenarios ended the CLI with
 * `TypeError [ERR_INVALID_STATE]: Invalid state: Controller is already closed`.
 */

const CLI_MAIN = join(REPO, 'apps/cli/src/main.ts');

interface CliRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

function runCli(args: readonly string[]): Promise<CliRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', TSX_LOADER_URL, CLI_MAIN, ...args], {
      cwd: REPO,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** A crash prints a stack ("    at …") or names an uncaught error; a report does neither. */
function expectNoCrash(run: CliRun): void {
  expect(run.signal).toBeNull();
  expect(run.stderr).not.toMatch(/^\s+at /m);
  expect(run.stderr).not.toMatch(/ERR_INVALID_STATE|Uncaught|TypeError|node:internal/);
}

let server: HostileHttpServer;
beforeAll(async () => {
  server = await HostileHttpServer.start();
});
afterAll(async () => {
  await server.stop();
});

const readOnly = ['--side-effect', 'external_read', '--risk', 'low', '--idempotency', 'read_only'];
const cases: { scenario: HostileScenario; classification: 'readOnly' | 'write' }[] = [
  ...HOSTILE_SCENARIOS.map((scenario) => ({ scenario, classification: 'readOnly' as const })),
  // The CLI's default classification is the most restrictive (external_write, non_idempotent).
  ...(['cut_json', 'too_large_json'] as const).map((scenario) => ({ scenario, classification: 'write' as const })),
];

describe('veetbot mcp check against a hostile Streamable HTTP server (a real CLI process)', () => {
  it.each(cases)('$scenario ($classification): the normal exit status and a stable reason code', async ({ scenario, classification }) => {
    const expected = EXPECTED_OUTCOMES[scenario][classification];
    const run = await runCli([
      'mcp',
      'check',
      '--url',
      server.url(scenario),
      '--allow-http',
      '--allow-private',
      '--request-timeout',
      '3',
      '--call',
      'echo',
      '--args',
      '{"text":"hi"}',
      ...(classification === 'readOnly' ? readOnly : []),
      '--json',
    ]);
    expectNoCrash(run);
    const report = JSON.parse(run.stdout) as {
      ok: boolean;
      reason_code: string | null;
      server: { status: string; reason_code: string | null };
      call: { item: { outcome: { status: string; reason_code: string } } | null } | null;
    };
    const connect = EXPECTED_OUTCOMES[scenario].connect;
    expect(report.server).toMatchObject(connect);
    if (connect.status === 'failed') {
      // Nothing to call: the report is the connect failure.
      expect(run.code).toBe(1);
      expect(report).toMatchObject({ ok: false, reason_code: connect.reason_code, call: null });
      return;
    }
    expect(report.call?.item?.outcome).toMatchObject(expected);
    if (expected.status === 'succeeded') {
      expect(run.code).toBe(0);
      expect(report).toMatchObject({ ok: true, reason_code: null });
    } else {
      expect(run.code).toBe(1);
      expect(report).toMatchObject({ ok: false, reason_code: expected.reason_code });
    }
  });

  it('the text report names the reason code on stderr, with no stack', async () => {
    const run = await runCli([
      'mcp',
      'check',
      '--url',
      server.url('too_large_json'),
      '--allow-http',
      '--allow-private',
      '--call',
      'echo',
      ...readOnly,
    ]);
    expectNoCrash(run);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe('veetbot: mcp check failed: tool.output_too_large.mcp_response\n');
  });

  it('the redirect was refused, not followed: the other host received nothing', async () => {
    expect(await server.elsewhereHits()).toBe(0);
  });
});
