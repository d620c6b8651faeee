import { spawn } from 'node:child_process';
import type { Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { createAdaptorServer } from '@hono/node-server';
import type { InvocationList } from '@veetbot/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiHarness, type ApiHarness } from './harness';

/*
 * veetbot's own MCP client against veetbot's own gateway (issue 24, docs/adr/0061): the real
 * CLI (`veetbot mcp check`, a child process, packages/mcp-adapter's client inside) dials /mcp
 * of the real api (in-process worker, PGlite) with nothing but its API key as a bearer token —
 * no Veetbot-Run-Id — lists the tools and calls one, at both revisions. The gateway chooses the
 * run: the key's default one. A recording front in this process sees every message: at
 * 2026-07-28 it passes everything; for 2025-11-25 it answers server/discover as a 2025-era
 * server does (-32601), so the client's own probe falls back to initialize.
 */

const ROOT = resolve(import.meta.dirname, '../../..');
const KEY_VARIABLE = 'VEETBOT_GATEWAY_TEST_KEY';

interface Seen {
  readonly method: string;
  readonly protocolVersion: string | null;
  readonly status: number;
  readonly runId: string | null;
}

async function front(h: ApiHarness, hideModern: boolean): Promise<{ server: HttpServer; url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createAdaptorServer({
    fetch: async (request: Request) => {
      const text = request.method === 'POST' ? await request.clone().text() : '';
      let method = request.method;
      try {
        method = (JSON.parse(text) as { method?: string }).method ?? method;
      } catch {
        // Not JSON: recorded by its HTTP method.
      }
      const protocolVersion = request.headers.get('mcp-protocol-version');
      if (hideModern && method === 'server/discover') {
        seen.push({ method, protocolVersion, status: 400, runId: null });
        return Response.json(
          { jsonrpc: '2.0', id: JSON.parse(text).id, error: { code: -32601, message: 'Method not found' } },
          { status: 400 },
        );
      }
      const response = await h.api.app.fetch(request);
      seen.push({ method, protocolVersion, status: response.status, runId: response.headers.get('veetbot-run-id') });
      return response;
    },
  }) as HttpServer;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, seen };
}

/** The real CLI in a real process, the key handed to it as the broker reads it (env:NAME). */
function check(url: string, key: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        'apps/cli/src/main.ts',
        'mcp',
        'check',
        '--url',
        url,
        '--auth-scheme',
        'bearer',
        '--credential-ref',
        `env:${KEY_VARIABLE}`,
        '--allow-http',
        '--allow-private',
        '--server-id',
        'gateway',
        '--side-effect',
        'external_read',
        '--risk',
        'low',
        '--idempotency',
        'read_only',
        '--call',
        'math.evaluate',
        '--args',
        '{"expression":"6*7"}',
        '--connect-timeout',
        '60',
        '--request-timeout',
        '60',
        '--json',
      ],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', [KEY_VARIABLE]: key } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('close', (code) => done({ code, stdout, stderr }));
  });
}

describe("veetbot's own MCP client through veetbot's gateway, with only its key", { timeout: 240_000 }, () => {
  let h: ApiHarness;
  const servers: HttpServer[] = [];

  beforeAll(async () => {
    h = await openApiHarness();
  });
  afterAll(async () => {
    await Promise.all(servers.map((s) => new Promise<void>((done) => s.close(() => done()))));
    await h.close();
  });

  for (const revision of ['2026-07-28', '2025-11-25'] as const) {
    it(`${revision}: veetbot mcp check --auth-scheme bearer lists the gateway's tools and calls one through its pipeline`, async () => {
      const { server, url, seen } = await front(h, revision === '2025-11-25');
      servers.push(server);
      const { code, stdout, stderr } = await check(url, h.a.key);
      expect({ code, stderr }, stdout).toEqual({ code: 0, stderr: '' });
      const report = JSON.parse(stdout);
      expect(report).toMatchObject({ ok: true, reason_code: null, server: { transport: 'http', status: 'connected' } });
      expect(report.tools).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            remote_name: 'math.evaluate',
            registry_name: 'mcp.gateway.math_evaluate',
            model_visible: true,
            pinned: true,
            // The schema as registered, through two MCP hops: the gateway's pin, then our client.
            input_schema: expect.objectContaining({ required: ['expression'] }),
          }),
        ]),
      );
      expect(report.call.item).toMatchObject({ outcome: { status: 'succeeded', reason_code: 'tool.ok' } });
      expect(JSON.stringify(report.call.item.content)).toContain('42');

      // The revision that was spoken, from the wire.
      const methods = seen.map((s) => s.method);
      expect(methods).toEqual(expect.arrayContaining(['tools/list', 'tools/call']));
      const calls = seen.filter((s) => s.method === 'tools/list' || s.method === 'tools/call');
      expect(calls.every((s) => s.protocolVersion === revision && s.status === 200)).toBe(true);
      if (revision === '2026-07-28') expect(methods).not.toContain('initialize');
      else expect(methods).toEqual(expect.arrayContaining(['server/discover', 'initialize']));

      // The gateway's own pipeline recorded the call in the run it chose for the key.
      const runId = seen.map((s) => s.runId).find((r) => r !== null) ?? '';
      expect(runId).toMatch(/^[0-9a-f-]{36}$/);
      const rows = (await (await h.call('GET', `/v1/invocations?run_id=${runId}`)).json()) as InvocationList;
      expect(rows.invocations.map((r) => [r.tool_name, r.status])).toEqual([['math.evaluate', 'succeeded']]);
    });
  }
});
