import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostileHttpServer, launchScript } from '../src/mcp-servers';

/**
 * Issue 16, bounded output (§ Output: "Output is read through a bounded reader that stops at
 * maximum_output_bytes * 4 — the hard ceiling. A tool that streams past it is cancelled with
 * OUTPUT_TOO_LARGE"; docs/adr/0025). A tenant HTTP server answers tools/call with 200 MiB of
 * SSE notifications, each far under the per-message cap, and never the response. A long-lived
 * process running the real pipeline and the real adapter (src/mcp-worker-child.ts, kept for this
 * test: it reads its own RSS, which the api and worker processes do not expose; the servers
 * declare maximum_output_bytes 64 KiB, so the ceiling is 256 KiB) makes the call while this
 * test samples the process's resident memory: the call ends tool.output_too_large (ADR 0021's
 * codes, Decision 26's status), and memory stays flat. Before the change the stream was read
 * until the call's timeout and the call ended tool.timeout.
 */

const CHILD = join(import.meta.dirname, '../src/mcp-worker-child.ts');
/** A behavioural bound, far below the 200 MiB the server sends and far above any noise. */
const RSS_GROWTH_BOUND_BYTES = 100 * 1024 * 1024;

let server: HostileHttpServer;
let child: ChildProcess;
let base: string;

beforeAll(async () => {
  server = await HostileHttpServer.start();
  const env: Record<string, string> = process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : {};
  const started = await launchScript(CHILD, [String(server.port)], env);
  child = started.child;
  base = `http://127.0.0.1:${started.ready.port as number}`;
}, 120_000);
afterAll(async () => {
  child?.kill('SIGTERM');
  await server?.stop();
});

/** The process's resident set, from /proc (Linux). */
function rssBytes(pid: number): number {
  const match = /^VmRSS:\s+(\d+)\s+kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error('no VmRSS');
  return Number(match[1]) * 1024;
}

async function callWatchingMemory(serverId: string): Promise<{ outcome: Record<string, unknown>; growth: number }> {
  const pid = child.pid!;
  const baseline = rssBytes(pid);
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, rssBytes(pid));
  }, 10);
  try {
    const response = await fetch(`${base}/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ server: serverId, arguments: { text: 'hi' } }),
    });
    expect(response.status).toBe(200);
    const outcome = (await response.json()) as Record<string, unknown>;
    peak = Math.max(peak, rssBytes(pid));
    return { outcome, growth: peak - baseline };
  } finally {
    clearInterval(sampler);
  }
}

describe('a server that streams far past the output ceiling is cut at the ceiling, with memory flat', () => {
  it('read-only: FAILED tool.output_too_large.mcp_response; resident memory grows by far less than the stream', async () => {
    const { outcome, growth } = await callWatchingMemory('r_flood_sse');
    expect(outcome).toEqual({ status: 'failed', reason_code: 'tool.output_too_large.mcp_response', row_status: 'failed' });
    expect(growth).toBeLessThan(RSS_GROWTH_BOUND_BYTES);
  });

  it('a non-idempotent write: UNCERTAIN tool.outcome_unknown.mcp_response_too_large (Decision 26), memory flat', async () => {
    const { outcome, growth } = await callWatchingMemory('w_flood_sse');
    expect(outcome).toEqual({ status: 'uncertain', reason_code: 'tool.outcome_unknown.mcp_response_too_large', row_status: 'uncertain' });
    expect(growth).toBeLessThan(RSS_GROWTH_BOUND_BYTES);
  });

  it('the same server answers the next call in the same process', async () => {
    const response = await fetch(`${base}/call`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ server: 'r_well_behaved', arguments: { text: 'hi' } }),
    });
    expect(await response.json()).toMatchObject({ status: 'succeeded', reason_code: 'tool.ok' });
    expect(child.exitCode).toBeNull();
  });
});
