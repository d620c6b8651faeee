import { performance } from 'node:perf_hooks';
import { migrate, openDatabase } from '@veetbot/store-postgres';
import { MANY_TOOLS_SERVER, openMcpWorld, openSession, stdioServerConfig } from './src/mcp-scene';
const database = await openDatabase({ dataDir: 'memory://' });
await migrate(database);
const config = stdioServerConfig('many', process.execPath, [MANY_TOOLS_SERVER]);
const t: Record<string, number> = {};
function wrap(obj: any, name: string, label: string) {
  const orig = obj[name].bind(obj);
  obj[name] = (...a: unknown[]) => {
    const s = performance.now();
    const r = orig(...a);
    const done = () => { t[label] = (t[label] ?? 0) + performance.now() - s; };
    if (r instanceof Promise) return r.finally(done);
    done();
    return r;
  };
}
for (let i = 0; i < 3; i++) {
  for (const k of Object.keys(t)) delete t[k];
  const world = await openMcpWorld(database, [config]);
  wrap(world.validator, 'admit', 'validator.admit');
  wrap(world.registry, 'registerDynamic', 'registerDynamic');
  wrap(world.registry, 'specsForSession', 'specsForSession');
  wrap(world.stores.mcpCatalog, 'recordGeneration', 'catalog.recordGeneration');
  wrap(world.stores.events, 'append', 'events.append');
  wrap(world.stores.sessions, 'create', 'sessions.create');
  const s = performance.now();
  await openSession(world);
  t['TOTAL'] = performance.now() - s;
  console.log(JSON.stringify(Object.fromEntries(Object.entries(t).map(([k, v]) => [k, Math.round(v)]))));
  await world.close();
}
await database.close();
