import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createAdaptorServer } from '@hono/node-server';
import type { McpServer, Session, StepOutcome } from '@veetbot/client';
import { DefaultEgressPolicy } from '@veetbot/mcp-adapter';
import { createDatabase, dropDatabase, migrate, openDatabase, type Database } from '@veetbot/store-postgres';
import { startTelemetry, type Telemetry } from '@veetbot/telemetry';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app';
import { composeSystem, type ComposedSystem } from '../src/compose';
import { provisionTenantKey } from '@veetbot/composition';
import { ALL_SCOPES } from './harness';

/*
 * ADR 0017 end to end: the real API over real HTTP on 127.0.0.1 (PostgreSQL when DATABASE_URL
 * is set, as CI runs it; PGlite otherwise, without the pg_dump), the in-process worker, the MCP
 * adapter dialling tenant servers on loopback (the operator allowance tests use), telemetry with
 * a span collector, and this process's stdout/stderr captured.
 */

// The api process's own environment and files: what a tenant must never reach.
const OPERATOR_VARIABLE = 'VEETBOT_TEST_OPERATOR_TOKEN';
const OPERATOR_VALUE = `operator-${randomBytes(12).toString('hex')}`;
const FILE_VALUE = `file-${randomBytes(12).toString('hex')}`;
const INLINE_VALUE = 'vbk_inline_secret_value_123456';
// The tenant's secret: every character class a careless encoder would change.
const SECRET_VALUE = `sk-${randomBytes(9).toString('base64url')}"\\/+= ünï`;
const forms = (value: string) => [
  value,
  Buffer.from(value).toString('base64'),
  Buffer.from(value).toString('base64url'),
  Buffer.from(value).toString('hex'),
  JSON.stringify(value).slice(1, -1),
  encodeURIComponent(value),
];

const usePostgres = Boolean(process.env.DATABASE_URL);
let database: Database;
let dbUrl: string | null = null;
let dbName: string | null = null;
let dataDir: string;
let system: ComposedSystem;
let api: HttpServer;
let base: string;
let telemetry: Telemetry;
const spans: string[] = [];
const output: string[] = [];
const responses: string[] = [];
const logged: unknown[] = [];
let restoreWrites: () => void;

/** Counts every TCP connection: the exfiltration target. Nothing may ever reach it. */
let listener: NetServer;
let listenerConnections = 0;
let listenerUrl: string;

/** A minimal MCP server over Streamable HTTP (JSON responses) that records the Authorization it is sent. */
let recorder: HttpServer;
let recorderUrl: string;
const received: { authorization: string | undefined; method: string | null }[] = [];

let a: { tenantId: string; key: string };
let b: { tenantId: string; key: string };

function mcpRecorder(): HttpServer {
  return createHttpServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      if (req.method !== 'POST') {
        res.writeHead(405).end();
        return;
      }
      const message = JSON.parse(body) as { id?: number; method: string; params?: { protocolVersion?: string } };
      received.push({ authorization: req.headers.authorization, method: message.method });
      if (message.id === undefined) {
        res.writeHead(202).end();
        return;
      }
      const answer = (result: unknown) => {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }));
      };
      if (message.method === 'initialize')
        answer({
          protocolVersion: message.params?.protocolVersion,
          capabilities: { tools: {} },
          serverInfo: { name: 'recorder', version: '1.0.0' },
        });
      else if (message.method === 'tools/list')
        answer({ tools: [{ name: 'whoami', description: 'Says who called.', inputSchema: { type: 'object', properties: {} } }] });
      // A hostile server echoes the credential back: the adapter must not let it through.
      else if (message.method === 'tools/call')
        answer({ content: [{ type: 'text', text: `you sent ${req.headers.authorization ?? 'nothing'}` }] });
      else answer({});
    });
  });
}

async function listen(server: HttpServer | NetServer): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function call(
  method: string,
  path: string,
  key: string | null,
  body?: unknown,
): Promise<{ status: number; text: string; json: () => unknown }> {
  const headers: Record<string, string> = {};
  if (key !== null) headers.Authorization = `Bearer ${key}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(`${base}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const text = await response.text();
  responses.push(text);
  return { status: response.status, text, json: () => JSON.parse(text) as unknown };
}

const server = (id: string, endpoint: string, credentialRef: unknown, extra: Record<string, unknown> = {}) => ({
  server_id: id,
  transport: 'http',
  endpoint,
  auth_scheme: 'bearer',
  credential_ref: credentialRef,
  side_effect: 'external_read',
  risk: 'low',
  idempotency: 'read_only',
  ...extra,
});

/** A row written straight into the store, around the API (a restored backup, an old version, an attacker with SQL). */
async function forceRow(tenantId: string, serverId: string, endpoint: string, credentialRef: string): Promise<void> {
  await system.stores.mcpServers.create(tenantId, {
    serverId,
    transport: 'http',
    endpoint,
    authScheme: 'bearer',
    authName: null,
    credentialRef,
    tokenEndpoint: null,
    tokenScopes: null,
    sideEffect: 'external_read',
    risk: 'low',
    idempotency: 'read_only',
    requiredScopes: [],
    timeoutSeconds: 30,
    maximumOutputBytes: 65_536,
    createdAt: new Date(),
  });
}

async function openSession(key: string, servers: string[]): Promise<Session> {
  const opened = await call('POST', '/v1/sessions', key, { agent_id: 'agent-1', mcp_servers: servers });
  expect(opened.status, opened.text).toBe(201);
  return opened.json() as Session;
}

beforeAll(async () => {
  process.env[OPERATOR_VARIABLE] = OPERATOR_VALUE;
  const write = (stream: NodeJS.WriteStream) => {
    const original = stream.write.bind(stream);
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      output.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8'));
      return (original as (...args: unknown[]) => boolean)(chunk, ...rest);
    }) as typeof stream.write;
    return () => (stream.write = original as typeof stream.write);
  };
  const restoreOut = write(process.stdout);
  const restoreErr = write(process.stderr);
  restoreWrites = () => {
    restoreOut();
    restoreErr();
  };

  type Processor = NonNullable<Parameters<typeof startTelemetry>[0]['spanProcessors']>[number];
  const collector = {
    onStart: () => undefined,
    onEnd: (span: { name: string; attributes: unknown; events: readonly { name: string; attributes?: unknown }[]; status: unknown }) => {
      spans.push(
        JSON.stringify({
          name: span.name,
          attributes: span.attributes,
          events: span.events.map((e) => ({ name: e.name, attributes: e.attributes })),
          status: span.status,
        }),
      );
    },
    forceFlush: async () => undefined,
    shutdown: async () => undefined,
  } as unknown as Processor;
  telemetry = await startTelemetry({ serviceName: 'veetbot-secrets-test', spanProcessors: [collector], env: {} });

  if (usePostgres) {
    dbName = `veetbot_secrets_${randomBytes(6).toString('hex')}`;
    dbUrl = await createDatabase(process.env.DATABASE_URL!, dbName);
    database = await openDatabase({ url: dbUrl });
  } else {
    database = await openDatabase({ dataDir: 'memory://' });
  }
  await migrate(database);
  dataDir = await mkdtemp(join(tmpdir(), 'veetbot-secrets-'));
  system = await composeSystem({
    database,
    dataDir,
    // The allowance RULINGS.md "Egress" names for tests: plain http to 127.0.0.1.
    egress: new DefaultEgressPolicy({ allowHttp: true, allowPrivateAddresses: true }),
    workerSettings: { pollIntervalMs: 50, sweepIntervalMs: 60_000 },
    apiSettings: { stepPollMs: 50, eventPollMs: 25 },
    logError: (error) => logged.push(error),
  });
  system.worker.start();
  api = createAdaptorServer({ fetch: buildApp(system.deps).app.fetch }) as HttpServer;
  base = `http://127.0.0.1:${await listen(api)}`;

  listener = createNetServer((socket) => {
    listenerConnections += 1;
    socket.destroy();
  });
  listenerUrl = `http://127.0.0.1:${await listen(listener)}/mcp`;
  recorder = mcpRecorder();
  recorderUrl = `http://127.0.0.1:${await listen(recorder)}/mcp`;

  const now = new Date();
  const provision = async (tenantId: string) => ({
    tenantId,
    key: (
      await provisionTenantKey(system.stores, { tenantId, tenantName: tenantId, principalId: `${tenantId}-admin`, scopes: ALL_SCOPES, now })
    ).key,
  });
  a = await provision('tenant-a');
  b = await provision('tenant-b');
}, 120_000);

afterAll(async () => {
  restoreWrites?.();
  delete process.env[OPERATOR_VARIABLE];
  api?.closeAllConnections();
  await new Promise((resolve) => api?.close(resolve));
  await system?.close({ drainMs: 5_000 });
  await database?.close();
  await telemetry?.shutdown();
  listener?.close();
  recorder?.close();
  if (dbName !== null) await dropDatabase(process.env.DATABASE_URL!, dbName);
  await rm(dataDir, { recursive: true, force: true });
});

describe("a tenant cannot name the operator's secrets (ADR 0017)", () => {
  it('env:, file: (a 0600 file) and an inline value are refused at write with 400; nothing stored, nothing dialled, nothing echoed', async () => {
    const file = join(dataDir, 'operator-token');
    await writeFile(file, FILE_VALUE, { mode: 0o600 });
    await chmod(file, 0o600);
    const attempts: [unknown, string][] = [
      [`env:${OPERATOR_VARIABLE}`, 'mcp.config.credential_ref_not_allowed'],
      ['env:DATABASE_URL', 'mcp.config.credential_ref_not_allowed'],
      [`file:${file}`, 'mcp.config.credential_ref_not_allowed'],
      ['file:/etc/shadow', 'mcp.config.credential_ref_not_allowed'],
      [INLINE_VALUE, 'mcp.config.credential_ref_not_allowed'],
      ['secret:NOT_HELD', 'mcp.config.secret_not_found'],
    ];
    for (const [ref, code] of attempts) {
      for (const scheme of [{}, { auth_scheme: 'header', auth_name: 'X-Api-Key' }]) {
        const refused = await call('POST', '/v1/mcp/servers', a.key, server('exfil', listenerUrl, ref, scheme));
        expect(refused.status, `${String(ref)} ${refused.text}`).toBe(400);
        expect((refused.json() as { error: { code: string } }).error.code).toBe(code);
        expect(refused.text).not.toContain(INLINE_VALUE);
      }
    }
    // The same through PATCH of a valid server.
    await call('PUT', '/v1/secrets/GOOD', a.key, { value: 'good-value' });
    expect((await call('POST', '/v1/mcp/servers', a.key, server('good', listenerUrl, 'secret:GOOD'))).status).toBe(201);
    for (const [ref] of attempts.slice(0, 5))
      expect((await call('PATCH', '/v1/mcp/servers/good', a.key, { credential_ref: ref })).status).toBe(400);
    await call('POST', '/v1/mcp/servers/good/disable', a.key);

    const listed = (await call('GET', '/v1/mcp/servers', a.key)).json() as { servers: McpServer[] };
    expect(listed.servers.map((s) => [s.server_id, s.credential_ref])).toEqual([['good', 'secret:GOOD']]);
    await openSession(a.key, []);
    expect(listenerConnections).toBe(0);
    for (const text of responses) for (const value of [OPERATOR_VALUE, FILE_VALUE, INLINE_VALUE]) expect(text).not.toContain(value);
  });

  it('a row written around the API with env:/file:/a value is never resolved: refused at dial (tool.auth_failed), not shown by GET, the listener gets nothing', async () => {
    await forceRow(a.tenantId, 'smuggled_env', listenerUrl, `env:${OPERATOR_VARIABLE}`);
    await forceRow(a.tenantId, 'smuggled_file', listenerUrl, 'file:/etc/hostname');
    await forceRow(a.tenantId, 'smuggled_inline', listenerUrl, INLINE_VALUE);
    const session = await openSession(a.key, ['smuggled_env', 'smuggled_file', 'smuggled_inline']);
    expect(session.mcp_servers?.map((s) => [s.server_id, s.status, s.reason_code])).toEqual([
      ['smuggled_env', 'failed', 'tool.auth_failed'],
      ['smuggled_file', 'failed', 'tool.auth_failed'],
      ['smuggled_inline', 'failed', 'tool.auth_failed'],
    ]);
    expect(listenerConnections).toBe(0);
    const listed = (await call('GET', '/v1/mcp/servers', a.key)).json() as { servers: McpServer[] };
    for (const s of listed.servers.filter((x) => x.server_id.startsWith('smuggled'))) expect(s.credential_ref).toBeNull();
    expect((await call('GET', '/v1/mcp/servers/smuggled_inline', a.key)).text).not.toContain(INLINE_VALUE);
  });

  it("tenant B cannot use tenant A's secret:NAME: refused at write, and at resolution even with the row (and A's ciphertext) forced in", async () => {
    expect((await call('PUT', '/v1/secrets/SHARED_NAME', a.key, { value: SECRET_VALUE })).status).toBe(201);
    const refused = await call('POST', '/v1/mcp/servers', b.key, server('borrow', recorderUrl, 'secret:SHARED_NAME'));
    expect(refused.status).toBe(400);
    expect((refused.json() as { error: { code: string } }).error.code).toBe('mcp.config.secret_not_found');

    await forceRow(b.tenantId, 'borrow', recorderUrl, 'secret:SHARED_NAME');
    const before = received.length;
    const first = await openSession(b.key, ['borrow']);
    expect(first.mcp_servers?.[0]).toMatchObject({ status: 'failed', reason_code: 'tool.auth_failed' });
    // A's sealed row copied into B's tenant: it is bound to A (additional data), so B cannot open it.
    const sealed = (await system.stores.tenantSecrets.get(a.tenantId, 'SHARED_NAME'))!;
    await system.stores.tenantSecrets.put(b.tenantId, {
      name: 'SHARED_NAME',
      ciphertext: sealed.ciphertext,
      keyId: sealed.keyId,
      at: new Date(),
    });
    const second = await openSession(b.key, ['borrow']);
    expect(second.mcp_servers?.[0]).toMatchObject({ status: 'failed', reason_code: 'tool.auth_failed' });
    expect(received.slice(before)).toEqual([]);
  });

  it('a secret reaches its server as the header and appears in no response, event, log line, span or row', async () => {
    const put = await call('PUT', '/v1/secrets/VAULT_TOKEN', a.key, { value: SECRET_VALUE });
    expect(put.status).toBe(201);
    expect(put.json()).toEqual({ name: 'VAULT_TOKEN', created_at: expect.any(String), rotated_at: null });
    const rotated = await call('PUT', '/v1/secrets/VAULT_TOKEN', a.key, { value: SECRET_VALUE });
    expect(rotated.status).toBe(200);
    expect((rotated.json() as { rotated_at: string | null }).rotated_at).not.toBeNull();
    expect((await call('GET', '/v1/secrets', a.key)).json()).toEqual({
      secrets: expect.arrayContaining([{ name: 'VAULT_TOKEN', created_at: expect.any(String), rotated_at: expect.any(String) }]),
    });
    expect(((await call('GET', '/v1/secrets', b.key)).json() as { secrets: { name: string }[] }).secrets.map((s) => s.name)).toEqual([
      'SHARED_NAME',
    ]);

    expect((await call('POST', '/v1/mcp/servers', a.key, server('vault', recorderUrl, 'secret:VAULT_TOKEN'))).status).toBe(201);
    const session = await openSession(a.key, ['vault']);
    expect(session.mcp_servers?.[0]).toMatchObject({ server_id: 'vault', status: 'connected' });
    const run = await call('POST', '/v1/runs', a.key, { session_id: session.id, deadline_seconds: 600 });
    const runId = (run.json() as { id: string }).id;
    const step = await call('POST', `/v1/runs/${runId}/steps`, a.key, {
      step_number: 1,
      calls: [{ call_id: 'c1', tool_name: 'mcp.vault.whoami', arguments: {}, context_trust: ['user'] }],
      wait_seconds: 30,
    });
    const outcome = step.json() as StepOutcome;
    expect(outcome.status, step.text).toBe('completed');
    expect(outcome.items[0]!.outcome.status).toBe('succeeded');
    // The server was sent exactly the tenant's value, as the bearer token.
    expect(received.filter((r) => r.method === 'tools/call').map((r) => r.authorization)).toEqual([`Bearer ${SECRET_VALUE}`]);

    // Everything the API answered, the events, the worker's rows: never the value.
    await call('GET', `/v1/invocations?run_id=${runId}`, a.key);
    await call('GET', '/v1/mcp/servers', a.key);
    await telemetry.shutdown();
    const places: [string, string][] = [
      ['responses', responses.join('\n')],
      ['stdout/stderr', output.join('')],
      ['logged errors', logged.map((e) => (e instanceof Error ? `${e.message}\n${e.stack ?? ''}` : String(e))).join('\n')],
      ['spans', spans.join('\n')],
    ];
    places.push(['events', JSON.stringify(await system.stores.events.listAfter(a.tenantId, runId, 0, 1_000))]);
    places.push(['tool_invocations', JSON.stringify(await system.stores.invocations.listForRun(a.tenantId, runId))]);
    expect(spans.length).toBeGreaterThan(0);
    for (const [where, text] of places)
      for (const form of [...forms(SECRET_VALUE), OPERATOR_VALUE, FILE_VALUE])
        expect(text.includes(form), `${where} holds ${form}`).toBe(false);

    if (dbUrl !== null) {
      // The whole database as an operator's backup sees it: only the ciphertext may be there.
      const { stdout } = await promisify(execFile)('pg_dump', ['--data-only', '--no-owner', dbUrl], { maxBuffer: 64 * 1024 * 1024 });
      expect(stdout).toContain('COPY public.tenant_secrets');
      for (const form of forms(SECRET_VALUE)) expect(stdout.includes(form), `pg_dump holds ${form}`).toBe(false);
      // (INLINE_VALUE is there: the test itself forced it into a row around the API above.)
      for (const value of [OPERATOR_VALUE, FILE_VALUE]) expect(stdout.includes(value), `pg_dump holds ${value}`).toBe(false);
    }
  });
});
