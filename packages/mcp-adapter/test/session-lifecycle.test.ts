import { afterEach, describe, expect, it } from 'vitest';
import type { McpConnectFailureObservation, SessionLifecycle, SessionRef, ToolMetrics } from '@veetbot/ports';
import { operatorServers } from '../src/index';
import type { ConfiguredServer } from '../src/config/server-directory';
import { harness, serverConfig, until } from './helpers/harness';
import { ScriptedHttpServer } from './helpers/scripted-http-server';

/**
 * Issue 16 items 2–4 at the adapter (docs/adr/0024): the sweep reads what became of the held
 * sessions (closed or deleted by another process; every run ended or suspended), and the
 * start-up warm-up fills one memory of the operator's servers that every tenant's session pins.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

async function scripted(setup: (s: ScriptedHttpServer) => void = () => undefined): Promise<ScriptedHttpServer> {
  const server = new ScriptedHttpServer();
  setup(server);
  await server.start();
  cleanups.push(() => server.stop());
  return server;
}

/** The durable session rows as another process leaves them: a test edits them, the sweep reads them. */
class SessionRows {
  readonly rows = new Map<string, Omit<SessionLifecycle, 'tenantId' | 'sessionId'>>();
  reads = 0;
  failing = false;
  set(sessionId: string, state: Omit<SessionLifecycle, 'tenantId' | 'sessionId'> | null): void {
    if (state === null) this.rows.delete(sessionId);
    else this.rows.set(sessionId, state);
  }
  async lifecycle(refs: readonly SessionRef[]): Promise<SessionLifecycle[]> {
    this.reads++;
    if (this.failing) throw new Error('the database is unreachable');
    return refs.flatMap((r) => {
      const row = this.rows.get(r.sessionId);
      return row === undefined ? [] : [{ ...r, ...row }];
    });
  }
}

class ConnectFailures implements ToolMetrics {
  readonly failures: McpConnectFailureObservation[] = [];
  recordToolCall(): void {}
  recordMcpRequest(): void {}
  recordMcpConnectFailure(o: McpConnectFailureObservation): void {
    this.failures.push(o);
  }
}

const readOnly = { sideEffect: 'external_read', risk: 'low', idempotency: 'read_only' };
const OPEN_AT_WORK = { status: 'open', runs: 1, workingRuns: 1 } as const;

function setUp(server: ScriptedHttpServer, rows: SessionRows) {
  const h = harness([serverConfig({ serverId: 'shop', transport: 'http', endpoint: server.url, authScheme: 'none', ...readOnly })], {
    sessions: rows,
    settings: { sweepIntervalSeconds: 0.05 },
  });
  cleanups.push(() => h.adapter.shutdown());
  return h;
}

const releasedWith = (h: ReturnType<typeof harness>, sessionId: string, reason: string) =>
  h.events
    .ofType('mcp.server.disconnected')
    .filter((e) => e.derivationKey.startsWith(`mcp:${sessionId}:`) && e.payload.reason_code === reason).length;

describe('the MCP sweep observes durable session state (issue 16 item 3)', () => {
  it('a session closed by another process is discarded: its transport closes; a session still at work keeps its own', async () => {
    const server = await scripted((s) => (s.tools = [{ name: 'look' }]));
    const rows = new SessionRows();
    const h = setUp(server, rows);
    rows.set('s1', OPEN_AT_WORK);
    rows.set('s2', OPEN_AT_WORK);
    await h.prepare('s1');
    // Named: live (not pinned from s1's discovery), so s2 holds a transport of its own.
    await h.prepare('s2', ['shop']);
    expect(server.calls('initialize')).toHaveLength(2);
    await until(() => rows.reads >= 2);
    expect(h.events.ofType('mcp.server.disconnected')).toEqual([]);

    rows.set('s1', { status: 'closed', runs: 1, workingRuns: 0 });
    await until(() => releasedWith(h, 's1', 'mcp.session_closed') === 1);
    const reads = rows.reads;
    await until(() => rows.reads >= reads + 2);
    expect(releasedWith(h, 's2', 'mcp.session_closed')).toBe(0);
    expect(h.events.ofType('mcp.server.disconnected')).toHaveLength(1);
    // s2's transport is still the one it opened: its call makes no new handshake.
    expect(await h.call('mcp.shop.look', {}, 's2')).toMatchObject({ ok: true });
    expect(server.calls('initialize')).toHaveLength(2);
  });

  it('a row that vanishes (deleted) after the sweep saw it discards the session; one never seen is given its grace', async () => {
    const server = await scripted((s) => (s.tools = [{ name: 'look' }]));
    const rows = new SessionRows();
    const h = setUp(server, rows);
    rows.set('s1', OPEN_AT_WORK);
    await h.prepare('s1');
    // s-opening: prepared, its row not yet written (the runtime prepares before it creates the row).
    await h.prepare('s-opening');
    await until(() => rows.reads >= 2);
    rows.set('s1', null);
    await until(() => releasedWith(h, 's1', 'mcp.session_deleted') === 1);
    expect(releasedWith(h, 's-opening', 'mcp.session_deleted')).toBe(0);
  });

  it('every run ended or suspended (run teardown in another process): unused transports are released, the pin kept', async () => {
    const server = await scripted((s) => (s.tools = [{ name: 'look' }]));
    const rows = new SessionRows();
    const h = setUp(server, rows);
    rows.set('s1', OPEN_AT_WORK);
    // A session with no run yet keeps the transport its open made, for its first call.
    rows.set('s-new', { status: 'open', runs: 0, workingRuns: 0 });
    await h.prepare('s1');
    await h.prepare('s-new', ['shop']);
    rows.set('s1', { status: 'open', runs: 2, workingRuns: 0 });
    await until(() => releasedWith(h, 's1', 'mcp.session_released') === 1);
    const reads = rows.reads;
    await until(() => rows.reads >= reads + 2);
    expect(releasedWith(h, 's-new', 'mcp.session_released')).toBe(0);
    // The pin and the registrations stay: a later run's call reconnects and compares with the pin.
    rows.set('s1', OPEN_AT_WORK);
    expect(await h.call('mcp.shop.look', {}, 's1')).toMatchObject({ ok: true });
    // s1, s-new, and s1's reconnection.
    expect(server.calls('initialize')).toHaveLength(3);
    expect(
      h.events
        .ofType('mcp.server.connected')
        .filter((e) => e.derivationKey.startsWith('mcp:s1:'))
        .map((e) => e.derivationKey.split(':').at(-1)),
    ).toEqual(['h1', 'h2']);
  });

  it('a store that cannot answer concludes nothing', async () => {
    const server = await scripted((s) => (s.tools = [{ name: 'look' }]));
    const rows = new SessionRows();
    const h = setUp(server, rows);
    rows.failing = true;
    await h.prepare('s1');
    await until(() => rows.reads >= 3);
    expect(h.events.ofType('mcp.server.disconnected')).toEqual([]);
    expect(await h.call('mcp.shop.look', {}, 's1')).toMatchObject({ ok: true });
    expect(server.calls('initialize')).toHaveLength(1);
  });

  it('a call in flight keeps its transport through a teardown seen by the sweep', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    const server = await scripted(
      (s) =>
        (s.tools = [
          {
            name: 'hold',
            handler: async () => {
              entered();
              await held;
              return { content: [{ type: 'text', text: 'done' }] };
            },
          },
        ]),
    );
    const rows = new SessionRows();
    const h = setUp(server, rows);
    rows.set('s1', OPEN_AT_WORK);
    await h.prepare('s1');
    const call = h.call('mcp.shop.hold', {}, 's1');
    await inside;
    rows.set('s1', { status: 'open', runs: 1, workingRuns: 0 });
    const reads = rows.reads;
    await until(() => rows.reads >= reads + 3);
    expect(releasedWith(h, 's1', 'mcp.session_released')).toBe(0);
    release();
    expect(await call).toMatchObject({ ok: true, content: [{ type: 'text', text: 'done' }] });
    await until(() => releasedWith(h, 's1', 'mcp.session_released') === 1);
  });
});

describe('warm-up (issue 16 item 4)', () => {
  it('records nothing; afterwards a session of ANY tenant pins the operator server without a handshake', async () => {
    const server = await scripted((s) => (s.tools = [{ name: 'w' }]));
    const h = harness([serverConfig({ serverId: 'ops', transport: 'http', endpoint: server.url, authScheme: 'none' })]);
    cleanups.push(() => h.adapter.shutdown());
    expect(await h.adapter.warmUp()).toEqual({ warmed: ['ops'], failed: [], rounds: 1 });
    expect(server.calls('initialize')).toHaveLength(1);
    expect(h.events.rows).toEqual([]);
    expect(h.catalog.preparations).toEqual([]);
    for (const [sessionId, tenantId] of [
      ['s-a', 'tenant-a'],
      ['s-b', 'tenant-b'],
      ['s-c', 'tenant-c'],
    ] as const) {
      const prepared = await h.prepare(sessionId, undefined, tenantId);
      expect(prepared.servers[0]).toMatchObject({ serverId: 'ops', status: 'pinned', toolCount: 1 });
    }
    expect(server.calls('initialize')).toHaveLength(1);
    expect(h.events.ofType('mcp.server.pinned')).toHaveLength(3);
    expect(h.events.ofType('mcp.server.connected')).toHaveLength(0);
  });

  it("a tenant server's discovery is never pinned by another tenant, even for a byte-identical configuration", async () => {
    const server = await scripted((s) => (s.tools = [{ name: 't' }]));
    const config = serverConfig({ serverId: 'tickets', transport: 'http', endpoint: server.url, authScheme: 'none' }, 'tenant');
    const tenantServer: ConfiguredServer = { ...config, origin: 'tenant' };
    const h = harness([], { servers: { list: async () => [tenantServer], operator: () => [] } });
    cleanups.push(() => h.adapter.shutdown());
    // Tenant servers are not warmed at all.
    expect(await h.adapter.warmUp()).toEqual({ warmed: [], failed: [], rounds: 0 });
    expect((await h.prepare('a1', undefined, 'tenant-a')).servers[0]).toMatchObject({ status: 'connected' });
    expect((await h.prepare('a2', undefined, 'tenant-a')).servers[0]).toMatchObject({ status: 'pinned' });
    expect((await h.prepare('b1', undefined, 'tenant-b')).servers[0]).toMatchObject({ status: 'connected' });
    expect(server.calls('initialize')).toHaveLength(2);
  });

  it('one server at a time; a server that is down is retried every warmup_retry_seconds for at most warmup_attempts rounds', async () => {
    const slow = await scripted((s) => {
      s.tools = [{ name: 'a' }];
      s.initializeDelayMs = 150;
    });
    const next = await scripted((s) => (s.tools = [{ name: 'b' }]));
    const gone = new ScriptedHttpServer();
    await gone.start();
    const downUrl = gone.url;
    await gone.stop();
    const metrics = new ConnectFailures();
    const configs = [
      serverConfig({ serverId: 'slow', transport: 'http', endpoint: slow.url, authScheme: 'none' }),
      serverConfig({ serverId: 'down', transport: 'http', endpoint: downUrl, authScheme: 'none' }),
      serverConfig({ serverId: 'next', transport: 'http', endpoint: next.url, authScheme: 'none' }),
    ];
    const h = harness(configs, {
      metrics,
      settings: { warmupAttempts: 3, warmupRetrySeconds: 0.05 },
      servers: { list: async () => operatorServers(configs), operator: () => operatorServers(configs) },
    });
    cleanups.push(() => h.adapter.shutdown());
    expect(await h.adapter.warmUp()).toEqual({ warmed: ['slow', 'next'], failed: ['down'], rounds: 3 });
    // One at a time: the next server was dialled only after the slow one had answered.
    expect(next.calls('initialize')[0]!.at).toBeGreaterThanOrEqual(slow.initializedAt[0]!);
    // Each server that answered was dialled once; the one that is down, once per round.
    expect(slow.calls('initialize')).toHaveLength(1);
    expect(next.calls('initialize')).toHaveLength(1);
    expect(metrics.failures).toEqual([1, 2, 3].map(() => ({ server: 'down', reasonCode: 'tool.server_unreachable' })));
    expect(h.events.rows).toEqual([]);
    expect(h.catalog.preparations).toEqual([]);
  });

  it('each handshake gets warmup_connect_timeout_seconds, not the connect timeout a user waits on', async () => {
    const sluggish = await scripted((s) => {
      s.tools = [{ name: 'x' }];
      s.initializeDelayMs = 2_000;
    });
    const metrics = new ConnectFailures();
    // connect_timeout_seconds 10 (the default) would have waited; the warm-up's 0.2 s does not.
    const h = harness([serverConfig({ serverId: 'sluggish', transport: 'http', endpoint: sluggish.url, authScheme: 'none' })], {
      metrics,
      settings: { warmupAttempts: 1, warmupConnectTimeoutSeconds: 0.2 },
    });
    cleanups.push(() => h.adapter.shutdown());
    expect(await h.adapter.warmUp()).toEqual({ warmed: [], failed: ['sluggish'], rounds: 1 });
    expect(metrics.failures).toEqual([{ server: 'sluggish', reasonCode: 'tool.server_unreachable' }]);
    expect(h.events.rows).toEqual([]);
  });
});
