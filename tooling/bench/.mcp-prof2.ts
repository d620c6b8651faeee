import { performance } from 'node:perf_hooks';
import { migrate, openDatabase } from '@veetbot/store-postgres';
import { EVERYTHING_ENTRY, openGovernedMcpCall, openMcpWorld, stdioServerConfig } from './src/mcp-scene';
const database = await openDatabase({ dataDir: 'memory://' });
await migrate(database);
const world = await openMcpWorld(database, [stdioServerConfig('everything', process.execPath, [EVERYTHING_ENTRY, 'stdio'])]);
const per = new Map<number, number>();
let last = 0; let lastStep = 0;
const g = await openGovernedMcpCall(world, 'everything', 'echo', { message: 'x' }, { hooks: { onStep: (n) => { const now = performance.now(); if (lastStep) per.set(lastStep, (per.get(lastStep) ?? 0) + now - last); last = now; lastStep = n; } } });
for (let i = 0; i < 5; i++) { await g.call(); lastStep = 0; }
per.clear();
const s = performance.now();
for (let i = 0; i < 20; i++) { await g.call(); per.set(lastStep, (per.get(lastStep) ?? 0) + performance.now() - last); lastStep = 0; }
const total = performance.now() - s;
console.log('perCall', (total / 20).toFixed(1), Object.fromEntries([...per].map(([k, v]) => [k, (v / 20).toFixed(1)])));
await world.close(); await database.close();
