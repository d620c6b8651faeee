import { performance } from 'node:perf_hooks';
import { migrate, openDatabase } from '@veetbot/store-postgres';
import { openGovernedScene } from './src/governed-scene';
import { openCommitFloor } from './src/commit-floor';
const database = await openDatabase({ dataDir: 'memory://' });
await migrate(database);
const scene = await openGovernedScene(database, { callers: 1 });
const floor = await openCommitFloor(database, 4);
for (let i = 0; i < 5; i++) await scene.call(0);
for (let r = 0; r < 3; r++) {
let s = performance.now();
for (let i = 0; i < 20; i++) await scene.call(0);
const a = (performance.now() - s) / 20;
s = performance.now();
for (let i = 0; i < 20; i++) await floor.call();
console.log('builtin governed', a.toFixed(1), 'floor', ((performance.now() - s) / 20).toFixed(1));
}
await database.close();
