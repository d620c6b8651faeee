import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { JSON_MAX_DEPTH, stringProblem } from '@veetbot/domain';
import { createDatabase, dropDatabase, migrate, openDatabase, type Database } from '@veetbot/store-postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app';
import { composeSystem, type ComposedSystem } from '../src/compose';
import { provisionTenantKey } from '@veetbot/composition';
import { REQUEST_BODY_MAX_DEPTH } from '../src/request-validation';

/**
 * Issue 10, item 4 (ADR 0019): every hostile input is a 4xx with a stable code that names the
 * field, and nothing is stored. The real api over HTTP on 127.0.0.1, on PostgreSQL (a database
 * of this test's own at DATABASE_URL; PGlite in memory when DATABASE_URL is not set). Bodies are
 * raw request text or bytes, exactly as an attacker sends them: `"\ud800"` is six characters of
 * JSON, not a JavaScript string run through JSON.stringify.
 */

const serverUrl = process.env.DATABASE_URL;
const driver = serverUrl ? 'postgres' : 'pglite';

let database: Database;
let system: ComposedSystem;
let http: Server;
let base: string;
let key: string;
let dataDir: string;
let ownDatabase: string | null = null;
let sessionId: string;
let runId: string;
const errors: unknown[] = [];

beforeAll(async () => {
  if (serverUrl) {
    ownDatabase = `veetbot_hostile_${randomBytes(6).toString('hex')}`;
    database = await openDatabase({ url: await createDatabase(serverUrl, ownDatabase), poolSize: 4 });
  } else {
    database = await openDatabase({ dataDir: 'memory://' });
  }
  await migrate(database);
  dataDir = await mkdtemp(join(tmpdir(), 'veetbot-hostile-'));
  // No worker: every request here is refused before anything could reach one.
  system = await composeSystem({ database, dataDir, mcp: false, logError: (error) => errors.push(error) });
  const { app } = buildApp(system.deps);
  http = createServer(getRequestListener(app.fetch));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
  // Every scope a route may require is held (wildcards, and the configuration scopes by name —
  // ADR 0017: a wildcard never carries them), so a refusal here is the input's, never a 403.
  const scopes = [
    'approvals.decide',
    'review.resolve',
    'questions.answer',
    'mcp.*',
    'mcp.servers.write',
    'secrets.read',
    'secrets.write',
    'workspace.read',
    'workspace.write',
    'demo.write',
  ];
  key = (
    await provisionTenantKey(system.stores, {
      tenantId: 'hostile',
      tenantName: 'hostile',
      principalId: 'hostile-admin',
      scopes,
      now: new Date(),
    })
  ).key;

  const session = await send({ method: 'POST', path: '/v1/sessions', body: '{"agent_id":"agent-1"}' });
  expect(session.status).toBe(201);
  sessionId = ((await session.json()) as { id: string }).id;
  const run = await send({ method: 'POST', path: '/v1/runs', body: JSON.stringify({ session_id: sessionId, deadline_seconds: 600 }) });
  expect(run.status).toBe(201);
  runId = ((await run.json()) as { id: string }).id;
}, 120_000);

afterAll(async () => {
  await new Promise<void>((resolve) => (http ? http.close(() => resolve()) : resolve()));
  await system?.close({ drainMs: 1000 });
  await database?.close();
  if (ownDatabase !== null && serverUrl) await dropDatabase(serverUrl, ownDatabase);
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

interface Request {
  readonly method: 'GET' | 'POST' | 'PATCH';
  readonly path: string;
  readonly body?: string | Uint8Array;
  readonly contentType?: string;
}

/**
 * One request on a connection of its own (no keep-alive pool): a row the server answers before
 * reading its whole body (413) must not decide how the next row's request fares.
 */
function send(r: Request): Promise<{ status: number; text(): Promise<string>; json(): Promise<unknown> }> {
  const headers: Record<string, string> = { Authorization: `Bearer ${key}` };
  const body = r.body === undefined ? undefined : typeof r.body === 'string' ? Buffer.from(r.body, 'utf8') : Buffer.from(r.body);
  if (body !== undefined) {
    headers['Content-Type'] = r.contentType ?? 'application/json';
    headers['Content-Length'] = String(body.length);
  }
  return new Promise((resolve, reject) => {
    const request = httpRequest(`${base}${r.path}`, { method: r.method, headers, agent: false }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('error', reject);
      response.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode ?? 0, text: async () => text, json: async () => JSON.parse(text) as unknown });
      });
    });
    // The server may answer (413) and close before it has read the whole body: that is its answer.
    request.on('error', (error: NodeJS.ErrnoException) =>
      error.code === 'EPIPE' || error.code === 'ECONNRESET' ? undefined : reject(error),
    );
    request.end(body);
  });
}

/** Every table's row count and a digest of its rows, read as the owner (no row-level security). */
async function snapshot(): Promise<Record<string, string>> {
  const tables = await database.statement({
    name: 'hostile_tables',
    text: "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY 1",
    values: [],
  });
  const out: Record<string, string> = {};
  for (const { name } of tables as { name: string }[]) {
    const [row] = await database.statement({
      name: `hostile_digest_${name}`,
      text: `SELECT count(*)::text AS n, coalesce(md5(string_agg(t::text, ',' ORDER BY t::text)), '') AS digest FROM "${name}" t`,
      values: [],
    });
    out[name] = `${String(row?.n)}:${String(row?.digest)}`;
  }
  return out;
}

const bytes = (...parts: (string | number[])[]): Uint8Array =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : Buffer.from(p))));
const deepObject = (levels: number): string => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
const deepArray = (levels: number): string => '['.repeat(levels) + ']'.repeat(levels);
const DEEP = `a.a.a.a.a.a.a.a`;

let stepNumber = 100;
/** A step body with one call whose fields default to a valid math.evaluate call. */
function step(
  call: { call_id?: string; tool_name?: string; arguments?: string; context_trust?: string; argument_trust?: string } = {},
  extra = '',
): string {
  const fields = [
    `"call_id":${call.call_id ?? '"c1"'}`,
    `"tool_name":${call.tool_name ?? '"math.evaluate"'}`,
    `"arguments":${call.arguments ?? '{"expression":"1+1"}'}`,
    `"context_trust":${call.context_trust ?? '["user"]'}`,
    ...(call.argument_trust === undefined ? [] : [`"argument_trust":${call.argument_trust}`]),
  ];
  return `{"step_number":${stepNumber++},"calls":[{${fields.join(',')}}],"wait_seconds":0${extra}}`;
}

interface Row {
  readonly name: string;
  readonly request: () => Request;
  readonly status: number;
  readonly code: string;
  /** The field the message names: `Invalid request at <at>:`. */
  readonly at?: string;
  /** A substring of what the message says is wrong. */
  readonly says?: string;
}

const NUL = 'contains a NUL character';
const UNICODE = 'is not valid Unicode';
const UUID = '00000000-0000-4000-8000-000000000000';
const steps = () => `/v1/runs/${runId}/steps`;

const ROWS: Row[] = [
  // --- POST /v1/sessions ---
  {
    name: 'agent_id with NUL',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: '{"agent_id":"a\\u0000b"}' }),
    status: 400,
    code: 'request.invalid',
    at: 'body.agent_id',
    says: NUL,
  },
  {
    name: 'agent_id with a lone high surrogate',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: '{"agent_id":"a\\ud800b"}' }),
    status: 400,
    code: 'request.invalid',
    at: 'body.agent_id',
    says: UNICODE,
  },
  {
    name: 'agent_id with a lone low surrogate',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: '{"agent_id":"\\udc00"}' }),
    status: 400,
    code: 'request.invalid',
    at: 'body.agent_id',
    says: UNICODE,
  },
  {
    name: 'agent_id with bytes that are not UTF-8',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: bytes('{"agent_id":"a', [0xff, 0xfe], '"}') }),
    status: 400,
    code: 'request.invalid',
    at: 'body.agent_id',
    says: UNICODE,
  },
  {
    name: 'agent_id with an overlong UTF-8 NUL (C0 80)',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: bytes('{"agent_id":"a', [0xc0, 0x80], '"}') }),
    status: 400,
    code: 'request.invalid',
    at: 'body.agent_id',
    says: UNICODE,
  },
  {
    name: 'agent_id with UTF-8 of a surrogate (ED A0 80)',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: bytes('{"agent_id":"a', [0xed, 0xa0, 0x80], '"}') }),
    status: 400,
    code: 'request.invalid',
    at: 'body.agent_id',
    says: UNICODE,
  },
  {
    name: 'an escaped high surrogate followed by a bad byte',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: bytes('{"agent_id":"a\\ud800', [0x80], '"}') }),
    status: 400,
    code: 'request.invalid',
    at: 'body.agent_id',
    says: UNICODE,
  },
  {
    name: 'a raw NUL byte in a string (not JSON)',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: bytes('{"agent_id":"a', [0x00], '"}') }),
    status: 400,
    code: 'request.invalid_json',
  },
  {
    name: 'enabled_tools item with NUL',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: '{"agent_id":"a","enabled_tools":["math.*","x\\u0000"]}' }),
    status: 400,
    code: 'request.invalid',
    at: 'body.enabled_tools.1',
    says: NUL,
  },
  {
    name: 'mcp_servers item with a lone surrogate',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: '{"agent_id":"a","mcp_servers":["\\udfff"]}' }),
    status: 400,
    code: 'request.invalid',
    at: 'body.mcp_servers.0',
    says: UNICODE,
  },
  {
    name: 'a __proto__ key',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: '{"agent_id":"a","__proto__":{"admin":true}}' }),
    status: 400,
    code: 'request.invalid',
    at: 'body',
    says: '"__proto__"',
  },
  {
    name: 'a duplicate key',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: '{"agent_id":"a","agent_id":"b"}' }),
    status: 400,
    code: 'request.invalid',
    at: 'body.agent_id',
    says: 'more than once',
  },
  {
    name: 'a duplicate key spelled with an escape',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: '{"agent_id":"a","\\u0061gent_id":"b"}' }),
    status: 400,
    code: 'request.invalid',
    at: 'body.agent_id',
    says: 'more than once',
  },
  {
    name: 'an unknown field whose name is a bidi override and a newline',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: '{"agent_id":"a","\\u202eevil\\n":1}' }),
    status: 400,
    code: 'request.invalid',
    at: 'body',
    says: 'unknown field "\\u202eevil\\n"',
  },
  {
    name: 'an array body',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: '[{"agent_id":"a"}]' }),
    status: 400,
    code: 'request.invalid',
    at: 'body',
    says: 'expected object',
  },
  {
    name: 'a string body',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: '"agent"' }),
    status: 400,
    code: 'request.invalid',
    at: 'body',
    says: 'expected object',
  },
  {
    name: 'a null body',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: 'null' }),
    status: 400,
    code: 'request.invalid',
    at: 'body',
    says: 'expected object',
  },
  {
    name: 'a body nested 10,000 deep',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: `{"agent_id":"a","x":${deepArray(10_000)}}` }),
    status: 400,
    code: 'request.invalid',
    at: 'body.x.0.0.0',
    says: `deeper than ${REQUEST_BODY_MAX_DEPTH}`,
  },
  {
    name: 'a huge string',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: JSON.stringify({ agent_id: 'a'.repeat(500_000) }) }),
    status: 400,
    code: 'request.invalid',
    at: 'body.agent_id',
    says: 'must be at most',
  },
  {
    name: 'a huge array',
    request: () => ({
      method: 'POST',
      path: '/v1/sessions',
      body: JSON.stringify({ agent_id: 'a', enabled_tools: Array.from({ length: 100_000 }, () => 'x') }),
    }),
    status: 400,
    code: 'request.invalid',
    at: 'body.enabled_tools',
    says: 'must be at most',
  },
  {
    name: 'a body over the limit',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: JSON.stringify({ agent_id: 'a'.repeat(2 * 1024 * 1024) }) }),
    status: 413,
    code: 'request.too_large',
  },
  {
    name: 'text/plain',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: '{"agent_id":"a"}', contentType: 'text/plain' }),
    status: 415,
    code: 'request.unsupported_media_type',
  },
  {
    name: 'a form',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: 'agent_id=a', contentType: 'application/x-www-form-urlencoded' }),
    status: 415,
    code: 'request.unsupported_media_type',
  },
  {
    name: 'JSON declared as UTF-16',
    request: () => ({ method: 'POST', path: '/v1/sessions', body: '{"agent_id":"a"}', contentType: 'application/json; charset=utf-16' }),
    status: 415,
    code: 'request.unsupported_media_type',
  },

  // --- POST /v1/runs, POST /v1/runs/:id/cancel, POST /v1/sessions/:id/close ---
  {
    name: 'session_id with NUL',
    request: () => ({ method: 'POST', path: '/v1/runs', body: '{"session_id":"\\u0000","deadline_seconds":60}' }),
    status: 400,
    code: 'request.invalid',
    at: 'body.session_id',
    says: NUL,
  },
  {
    name: 'a budgets key with NUL',
    request: () => ({
      method: 'POST',
      path: '/v1/runs',
      body: `{"session_id":"${UUID}","deadline_seconds":60,"budgets":{"maximum_tool_calls\\u0000":1}}`,
    }),
    status: 400,
    code: 'request.invalid',
    at: 'body.budgets',
    says: 'key that contains a NUL',
  },
  {
    name: 'a cancel body with a lone surrogate',
    request: () => ({ method: 'POST', path: `/v1/runs/${runId}/cancel`, body: '{"why":"\\ud800"}' }),
    status: 400,
    code: 'request.invalid',
    at: 'body.why',
    says: UNICODE,
  },
  {
    name: 'a close body with NUL in a key',
    request: () => ({ method: 'POST', path: `/v1/sessions/${sessionId}/close`, body: '{"\\u0000":1}' }),
    status: 400,
    code: 'request.invalid',
    at: 'body',
    says: 'key that contains a NUL',
  },

  // --- POST /v1/runs/:id/steps ---
  {
    name: 'call_id with NUL',
    request: () => ({ method: 'POST', path: steps(), body: step({ call_id: '"c\\u0000"' }) }),
    status: 400,
    code: 'request.invalid',
    at: 'body.calls.0.call_id',
    says: NUL,
  },
  {
    name: 'call_id with a lone surrogate',
    request: () => ({ method: 'POST', path: steps(), body: step({ call_id: '"\\ud800"' }) }),
    status: 400,
    code: 'request.invalid',
    at: 'body.calls.0.call_id',
    says: UNICODE,
  },
  {
    name: 'tool_name with NUL',
    request: () => ({ method: 'POST', path: steps(), body: step({ tool_name: '"math.evaluate\\u0000"' }) }),
    status: 400,
    code: 'request.invalid',
    at: 'body.calls.0.tool_name',
    says: NUL,
  },
  {
    name: 'an argument key with NUL',
    request: () => ({ method: 'POST', path: steps(), body: step({ arguments: '{"expression":"1","x\\u0000":1}' }) }),
    status: 400,
    code: 'request.invalid',
    at: 'body.calls.0.arguments',
    says: 'key that contains a NUL',
  },
  {
    name: 'an argument value with NUL',
    request: () => ({ method: 'POST', path: steps(), body: step({ arguments: '{"expression":"1\\u0000"}' }) }),
    status: 400,
    code: 'request.invalid',
    at: 'body.calls.0.arguments.expression',
    says: NUL,
  },
  {
    name: 'an argument with a lone high surrogate',
    request: () => ({ method: 'POST', path: steps(), body: step({ arguments: '{"expression":"\\ud800"}' }) }),
    status: 400,
    code: 'request.invalid',
    at: 'body.calls.0.arguments.expression',
    says: UNICODE,
  },
  {
    name: 'a nested argument with a lone low surrogate',
    request: () => ({ method: 'POST', path: steps(), body: step({ arguments: '{"expression":"1","x":{"list":["ok","\\udc00"]}}' }) }),
    status: 400,
    code: 'request.invalid',
    at: 'body.calls.0.arguments.x.list.1',
    says: UNICODE,
  },
  {
    name: 'an argument key with a lone surrogate',
    request: () => ({ method: 'POST', path: steps(), body: step({ arguments: '{"\\ud800":"1"}' }) }),
    status: 400,
    code: 'request.invalid',
    at: 'body.calls.0.arguments',
    says: 'key that is not valid Unicode',
  },
  {
    name: 'an argument with bytes that are not UTF-8',
    request: () => ({
      method: 'POST',
      path: steps(),
      body: bytes(step({ arguments: '{"expression":"1+' }).replace(/1\+.*$/, '1+'), [0xc3, 0x28], '"}}]}'),
    }),
    status: 400,
    code: 'request.invalid',
    at: 'body.calls.0.arguments.expression',
    says: UNICODE,
  },
  // JSON_MAX_DEPTH levels inside `arguments` pass (the control below), one more does not:
  // the line the pipeline draws for a call that never came through the api.
  {
    name: 'arguments one level past the limit',
    request: () => ({ method: 'POST', path: steps(), body: step({ arguments: `{"expression":"1","x":${deepObject(JSON_MAX_DEPTH)}}` }) }),
    status: 400,
    code: 'request.invalid',
    at: `body.calls.0.arguments.x.${DEEP}`,
    says: `deeper than ${REQUEST_BODY_MAX_DEPTH}`,
  },
  {
    name: 'arguments nested 5,000 deep',
    request: () => ({ method: 'POST', path: steps(), body: step({ arguments: deepObject(5_000) }) }),
    status: 400,
    code: 'request.invalid',
    at: `body.calls.0.arguments.${DEEP}`,
    says: `deeper than ${REQUEST_BODY_MAX_DEPTH}`,
  },
  {
    name: 'arguments nested 10,000 deep',
    request: () => ({ method: 'POST', path: steps(), body: step({ arguments: deepObject(10_000) }) }),
    status: 400,
    code: 'request.invalid',
    at: `body.calls.0.arguments.${DEEP}`,
    says: `deeper than ${REQUEST_BODY_MAX_DEPTH}`,
  },
  {
    name: 'arguments of arrays nested 100,000 deep',
    request: () => ({ method: 'POST', path: steps(), body: step({ arguments: `{"expression":${deepArray(100_000)}}` }) }),
    status: 400,
    code: 'request.invalid',
    at: 'body.calls.0.arguments.expression.0.0',
    says: `deeper than ${REQUEST_BODY_MAX_DEPTH}`,
  },
  {
    name: 'an argument -0 (it would be stored as 0)',
    request: () => ({ method: 'POST', path: steps(), body: step({ arguments: '{"expression":"1","n":[1,-0]}' }) }),
    status: 400,
    code: 'request.invalid',
    at: 'body.calls.0.arguments.n.1',
    says: '-0',
  },
  {
    name: 'an argument 1e400 (it would be stored as null)',
    request: () => ({ method: 'POST', path: steps(), body: step({ arguments: '{"expression":1e400}' }) }),
    status: 400,
    code: 'request.invalid',
    at: 'body.calls.0.arguments.expression',
    says: 'range of a double',
  },
  {
    name: 'a __proto__ argument',
    request: () => ({ method: 'POST', path: steps(), body: step({ arguments: '{"__proto__":{"expression":"1"}}' }) }),
    status: 400,
    code: 'request.invalid',
    at: 'body.calls.0.arguments',
    says: '"__proto__"',
  },
  {
    name: 'a duplicate argument',
    request: () => ({ method: 'POST', path: steps(), body: step({ arguments: '{"expression":"1","expression":"2"}' }) }),
    status: 400,
    code: 'request.invalid',
    at: 'body.calls.0.arguments.expression',
    says: 'more than once',
  },
  {
    name: 'an argument_trust key with NUL',
    request: () => ({ method: 'POST', path: steps(), body: step({ argument_trust: '{"expression\\u0000":"user"}' }) }),
    status: 400,
    code: 'request.invalid',
    at: 'body.calls.0.argument_trust',
    says: 'key that contains a NUL',
  },
  {
    name: 'a huge context_trust array',
    request: () => ({
      method: 'POST',
      path: steps(),
      body: step({ context_trust: JSON.stringify(Array.from({ length: 50_000 }, () => 'user')) }),
    }),
    status: 400,
    code: 'request.invalid',
    at: 'body.calls.0.context_trust',
    says: 'must be at most',
  },
  {
    name: '129 calls',
    request: () => ({
      method: 'POST',
      path: steps(),
      body: `{"step_number":1,"calls":[${Array.from({ length: 129 }, (_, i) => `{"call_id":"c${i}","tool_name":"math.evaluate","arguments":{},"context_trust":["user"]}`).join(',')}]}`,
    }),
    status: 400,
    code: 'request.invalid',
    at: 'body.calls',
    says: 'must be at most',
  },
  {
    name: 'a steps array body',
    request: () => ({ method: 'POST', path: steps(), body: '[]' }),
    status: 400,
    code: 'request.invalid',
    at: 'body',
    says: 'expected object',
  },

  // --- approvals, review, MCP servers ---
  {
    name: 'an approve body with a lone surrogate',
    request: () => ({ method: 'POST', path: `/v1/approvals/${UUID}/approve`, body: '{"note":"\\ud800"}' }),
    status: 400,
    code: 'request.invalid',
    at: 'body.note',
    says: UNICODE,
  },
  {
    name: 'a deny body nested 10,000 deep',
    request: () => ({ method: 'POST', path: `/v1/approvals/${UUID}/deny`, body: `{"x":${deepArray(10_000)}}` }),
    status: 400,
    code: 'request.invalid',
    at: 'body.x.0',
    says: `deeper than ${REQUEST_BODY_MAX_DEPTH}`,
  },
  {
    name: 'a review note with NUL',
    request: () => ({
      method: 'POST',
      path: `/v1/review/uncertain/${UUID}/resolve`,
      body: '{"resolution":"failed","note":"checked\\u0000"}',
    }),
    status: 400,
    code: 'request.invalid',
    at: 'body.note',
    says: NUL,
  },
  {
    name: 'an MCP endpoint with NUL',
    request: () => ({
      method: 'POST',
      path: '/v1/mcp/servers',
      body: '{"server_id":"hostile","transport":"http","endpoint":"https://mcp.example.com/\\u0000","auth_scheme":"none"}',
    }),
    status: 400,
    code: 'request.invalid',
    at: 'body.endpoint',
    says: NUL,
  },
  {
    name: 'an MCP credential_ref with a lone surrogate',
    request: () => ({
      method: 'POST',
      path: '/v1/mcp/servers',
      body: '{"server_id":"hostile","transport":"http","endpoint":"https://mcp.example.com/","auth_scheme":"bearer","credential_ref":"secret:\\udc00"}',
    }),
    status: 400,
    code: 'request.invalid',
    at: 'body.credential_ref',
    says: UNICODE,
  },
  {
    name: 'an MCP PATCH token scope with NUL',
    request: () => ({ method: 'PATCH', path: '/v1/mcp/servers/hostile', body: '{"token_scopes":["read\\u0000"]}' }),
    status: 400,
    code: 'request.invalid',
    at: 'body.token_scopes.0',
    says: NUL,
  },

  // --- query parameters ---
  {
    name: 'tool_name query with NUL',
    request: () => ({ method: 'GET', path: '/v1/invocations?tool_name=a%00b' }),
    status: 400,
    code: 'request.invalid',
    at: 'query.tool_name',
    says: NUL,
  },
  {
    name: 'run_id query with NUL',
    request: () => ({ method: 'GET', path: '/v1/invocations?run_id=%00' }),
    status: 400,
    code: 'request.invalid',
    at: 'query.run_id',
    says: NUL,
  },
  {
    name: 'a query parameter name with NUL',
    request: () => ({ method: 'GET', path: '/v1/approvals?li%00mit=1' }),
    status: 400,
    code: 'request.invalid',
    at: 'query',
    says: 'key that contains a NUL',
  },
  {
    name: 'a __proto__ query parameter',
    request: () => ({ method: 'GET', path: '/v1/review/uncertain?__proto__=1' }),
    status: 400,
    code: 'request.invalid',
    at: 'query',
    says: '"__proto__"',
  },
  {
    name: 'a repeated query parameter',
    request: () => ({ method: 'GET', path: '/v1/approvals?limit=1&limit=2' }),
    status: 400,
    code: 'request.invalid',
    at: 'query.limit',
    says: 'give it once',
  },
  {
    name: 'a huge limit',
    request: () => ({ method: 'GET', path: `/v1/invocations?limit=${'9'.repeat(400)}` }),
    status: 400,
    code: 'request.invalid',
    at: 'query.limit',
  },
  {
    name: 'the events stream with NUL in run_id',
    request: () => ({ method: 'GET', path: '/v1/events?run_id=%00' }),
    status: 400,
    code: 'request.invalid',
    at: 'query.run_id',
    says: NUL,
  },
  {
    name: 'the events stream with a NUL last_event_id',
    request: () => ({ method: 'GET', path: '/v1/events?last_event_id=1%00' }),
    status: 400,
    code: 'request.invalid',
    at: 'query.last_event_id',
    says: NUL,
  },
  {
    name: 'an invocations cursor holding NUL',
    request: () => ({
      method: 'GET',
      path: `/v1/invocations?cursor=${Buffer.from('["2026-01-01T00:00:00Z","\\u0000"]').toString('base64url')}`,
    }),
    status: 400,
    code: 'request.invalid',
    at: 'query.cursor',
  },

  // --- path parameters: a value that names nothing is the missing-id 404 ---
  {
    name: 'an MCP server_id path with NUL',
    request: () => ({ method: 'GET', path: '/v1/mcp/servers/a%00b' }),
    status: 404,
    code: 'not_found',
  },
  {
    name: 'an MCP server disable path with NUL',
    request: () => ({ method: 'POST', path: '/v1/mcp/servers/a%00b/disable' }),
    status: 404,
    code: 'not_found',
  },
  {
    name: 'an MCP PATCH path with NUL',
    request: () => ({ method: 'PATCH', path: '/v1/mcp/servers/a%00b', body: '{"enabled":false}' }),
    status: 404,
    code: 'not_found',
  },
  { name: 'a session path with NUL', request: () => ({ method: 'GET', path: '/v1/sessions/%00' }), status: 404, code: 'not_found' },
  {
    name: 'a step number path with NUL',
    request: () => ({ method: 'GET', path: `/v1/runs/${UUID}/steps/1%00` }),
    status: 404,
    code: 'not_found',
  },
  {
    name: 'an artifact path with a lone surrogate',
    request: () => ({ method: 'GET', path: '/v1/artifacts/%ED%A0%80' }),
    status: 404,
    code: 'not_found',
  },
  { name: 'an invocation path with NUL', request: () => ({ method: 'GET', path: '/v1/invocations/%00' }), status: 404, code: 'not_found' },
];

describe(`hostile input over HTTP (${driver})`, () => {
  it.each(ROWS)('$name: $status $code, the field named, nothing stored', async (row) => {
    const before = await snapshot();
    const response = await send(row.request());
    const text = await response.text();
    expect(response.status, text.slice(0, 300)).toBe(row.status);
    const body = JSON.parse(text) as { error: { code: string; message: string } };
    expect(Object.keys(body)).toEqual(['error']);
    expect(body.error.code).toBe(row.code);
    if (row.at !== undefined) expect(body.error.message).toContain(`Invalid request at ${row.at}`);
    if (row.says !== undefined) expect(body.error.message).toContain(row.says);
    // The message names the field and never carries a hostile character back: printable ASCII.
    expect(stringProblem(body.error.message)).toBeNull();
    expect(body.error.message).toMatch(/^[\x20-\x7e…]*$/);
    expect(await snapshot()).toEqual(before);
  });

  it('the OpenAPI document says so: 415 on every route that takes a body', async () => {
    const document = (await (await send({ method: 'GET', path: '/v1/openapi.json' })).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
    };
    const submit = document.paths['/v1/runs/{run_id}/steps']?.post;
    expect(Object.keys(submit?.responses ?? {})).toEqual(expect.arrayContaining(['400', '413', '415']));
  });

  it('nothing reached the 500 path: no internal error was logged', () => {
    expect(errors).toEqual([]);
  });

  it('the same routes take the same requests without the hostile part (the rows test the input, not the route)', async () => {
    const ok = async (r: Request, status: number) => {
      const response = await send(r);
      expect(response.status, `${r.method} ${r.path}: ${(await response.text()).slice(0, 300)}`).toBe(status);
    };
    await ok({ method: 'POST', path: '/v1/sessions', body: '{"agent_id":"a\\u00e9\\ud83d\\ude00","enabled_tools":["math.*"]}' }, 201);
    await ok({ method: 'POST', path: '/v1/sessions', body: bytes('{"agent_id":"caf', [0xc3, 0xa9], '"}') }, 201);
    await ok({ method: 'POST', path: '/v1/sessions', body: '{"agent_id":"a"}', contentType: 'application/json; charset=UTF-8' }, 201);
    await ok(
      { method: 'POST', path: steps(), body: step({ arguments: `{"expression":"1+1","x":${deepObject(JSON_MAX_DEPTH - 1)}}` }) },
      202,
    );
    await ok(
      {
        method: 'POST',
        path: steps(),
        body: step({ arguments: '{"expression":"1","x":{"list":["ok","\\ud83d\\ude00"]}}', argument_trust: '{"expression":"user"}' }),
      },
      202,
    );
    await ok({ method: 'GET', path: '/v1/invocations?tool_name=math.evaluate' }, 200);
    await ok({ method: 'GET', path: '/v1/mcp/servers/hostile' }, 404);
    await ok({ method: 'POST', path: `/v1/runs/${runId}/cancel` }, 200);
    expect(errors).toEqual([]);
  });
});
