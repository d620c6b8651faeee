import { performance } from 'node:perf_hooks';
import { migrate, openDatabase } from '@veetbot/store-postgres';
import { MANY_TOOLS_SERVER, openMcpWorld, openSession, stdioServerConfig } from './mcp-scene';
import { openRawClient } from './mcp-raw-client';

/**
 * The session-open benchmark's own process (spawned by mcp-session-open.bench.ts with
 * --expose-gc), so its memory readings are this work's alone. On BENCH_DATABASE_URL (a migrated
 * PostgreSQL database) or PGlite in memory:
 *
 * 1. cold: the first session open of the process (module initialisation and JIT included);
 * 2. BENCH_ROUNDS rounds, alternating which goes first: a session open in a new world (adapter,
 *    registry, tenant — so discovery is live, the catalog generation is written, nothing is
 *    reused from ADR-0131's memory), and the baseline — the SDK's Client spawning the same
 *    server, initialize, tools/list — each timed;
 * 3. memory: a full GC, a reading, one more session open whose world is kept alive, a full GC,
 *    a reading. That open is also instrumented — the validator's admit, the registry's
 *    registerDynamic and specsForSession, the catalog, event and session stores are wrapped with
 *    timers — to say where the time goes.
 *
 * Prints one JSON line.
 */

const TOOLS = Number(process.env.BENCH_TOOLS ?? '500');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? '3');
const command = process.execPath;
const args = [MANY_TOOLS_SERVER, '--tools', String(TOOLS)];

function reading(): { rssBytes: number; heapUsedBytes: number; externalBytes: number } {
  // Twice: the first collection runs finalizers whose targets the second one frees.
  (globalThis as { gc?: () => void }).gc?.();
  (globalThis as { gc?: () => void }).gc?.();
  const m = process.memoryUsage();
  return { rssBytes: m.rss, heapUsedBytes: m.heapUsed, externalBytes: m.external };
}

const url = process.env.BENCH_DATABASE_URL;
const database = url ? await openDatabase({ url, poolSize: 10 }) : await openDatabase({ dataDir: 'memory://' });
if (!url) await migrate(database);
const config = stdioServerConfig('many', command, args);

type World = Awaited<ReturnType<typeof openMcpWorld>>;

/** Where one session open spends its time (ms), by the parts wrapped. */
interface Breakdown {
  admitCalls: number;
  admitMs: number;
  /** Of admitMs, inside registerDynamic (the registry's own admission of the mapped schema). */
  admitInRegistryMs: number;
  registerDynamicMs: number;
  /** McpCatalogStore.recordPreparation: the preparation's generations and events, one transaction. */
  catalogMs: number;
  /** EventStore.append: events written outside the preparation's transaction. */
  eventsMs: number;
  pinMs: number;
  sessionRowMs: number;
}

function instrument(world: World): Breakdown {
  const b: Breakdown = {
    admitCalls: 0,
    admitMs: 0,
    admitInRegistryMs: 0,
    registerDynamicMs: 0,
    catalogMs: 0,
    eventsMs: 0,
    pinMs: 0,
    sessionRowMs: 0,
  };
  let inRegistry = false;
  const time = <T>(work: () => T, add: (ms: number) => void): T => {
    const start = performance.now();
    const result = work();
    if (result instanceof Promise) return result.finally(() => add(performance.now() - start)) as T;
    add(performance.now() - start);
    return result;
  };
  const validator = world.validator as { admit: World['validator']['admit'] };
  const admit = validator.admit.bind(world.validator);
  validator.admit = (schema, options) =>
    time(
      () => admit(schema, options),
      (ms) => {
        b.admitCalls += 1;
        b.admitMs += ms;
        if (inRegistry) b.admitInRegistryMs += ms;
      },
    );
  const registry = world.registry as {
    registerDynamic: World['registry']['registerDynamic'];
    specsForSession: World['registry']['specsForSession'];
  };
  const registerDynamic = registry.registerDynamic.bind(world.registry);
  registry.registerDynamic = (tools, source) => {
    inRegistry = true;
    return time(
      () => registerDynamic(tools, source).finally(() => (inRegistry = false)),
      (ms) => (b.registerDynamicMs += ms),
    );
  };
  const specsForSession = registry.specsForSession.bind(world.registry);
  registry.specsForSession = (...a) =>
    time(
      () => specsForSession(...a),
      (ms) => (b.pinMs += ms),
    );
  // ADR-0131: a preparation writes its generations and its events in one transaction, so
  // catalogMs is that whole write; eventsMs counts only events appended outside it.
  const catalog = world.stores.mcpCatalog as { recordPreparation: World['stores']['mcpCatalog']['recordPreparation'] };
  const recordPreparation = catalog.recordPreparation.bind(world.stores.mcpCatalog);
  catalog.recordPreparation = (...a) =>
    time(
      () => recordPreparation(...a),
      (ms) => (b.catalogMs += ms),
    );
  const events = world.stores.events as { append: World['stores']['events']['append'] };
  const append = events.append.bind(world.stores.events);
  events.append = (...a) =>
    time(
      () => append(...a),
      (ms) => (b.eventsMs += ms),
    );
  const sessions = world.stores.sessions as { create: World['stores']['sessions']['create'] };
  const create = sessions.create.bind(world.stores.sessions);
  sessions.create = (...a) =>
    time(
      () => create(...a),
      (ms) => (b.sessionRowMs += ms),
    );
  return b;
}

async function timedOpen(
  keep: boolean,
  measure = false,
): Promise<{ ms: number; toolCount: number; rejected: number; world: World | null; breakdown: Breakdown | null }> {
  // The world (tenant row, adapter, registry with the builtins) exists before a session opens.
  const world = await openMcpWorld(database, [config]);
  const breakdown = measure ? instrument(world) : null;
  const start = performance.now();
  const session = await openSession(world);
  const ms = performance.now() - start;
  const server = session.preparation.servers[0];
  if (server?.status !== 'connected') throw new Error(`preparation did not connect: ${JSON.stringify(session.preparation.servers)}`);
  const rejected = session.preparation.registration.rejected.length;
  if (!keep) await world.close();
  return { ms, toolCount: session.toolCount, rejected, world: keep ? world : null, breakdown };
}

async function timedRaw(): Promise<number> {
  const start = performance.now();
  const raw = await openRawClient(command, args);
  let listed = 0;
  let cursor: string | undefined;
  do {
    const page = await raw.client.listTools(cursor === undefined ? {} : { cursor });
    listed += page.tools.length;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  const ms = performance.now() - start;
  await raw.close();
  if (listed !== TOOLS) throw new Error(`the raw client listed ${listed} tools, expected ${TOOLS}`);
  return ms;
}

const cold = await timedOpen(false);
const ours: number[] = [];
const baseline: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  if (r % 2 === 0) {
    ours.push((await timedOpen(false)).ms);
    baseline.push(await timedRaw());
  } else {
    baseline.push(await timedRaw());
    ours.push((await timedOpen(false)).ms);
  }
}
const before = reading();
const kept = await timedOpen(true, true);
const after = reading();
await kept.world?.close();
await database.close();

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
process.stdout.write(
  `${JSON.stringify({
    driver: database.driver,
    tools: TOOLS,
    registered: cold.toolCount,
    rejected: cold.rejected,
    coldMs: cold.ms,
    rounds: ROUNDS,
    oursMs: ours,
    baselineMs: baseline,
    oursMedianMs: median(ours),
    baselineMedianMs: median(baseline),
    memoryOpenMs: kept.ms,
    breakdown: kept.breakdown,
    before,
    after,
  })}\n`,
);
