// `pnpm test:unit`: every package's tests, with the longest suite started first (docs/adr/0084).
//
// apps/integration-tests runs its files one at a time (they start databases and processes) and
// takes about thirty minutes on CI's two cores: it is the critical path. Under one
// `turbo run test --concurrency=2` it waited behind the packages turbo happened to start first,
// about five minutes. Here it starts at once, in a lane of its own, beside turbo's two lanes for
// every other package (their serial sum, api and cli with the conformance suites, is longer than
// the integration suite). The exit status is the first non-zero of the two (both always run to
// the end).
import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const LONGEST = '@veetbot/integration-tests';
const TURBO = join(root, 'node_modules/.bin/turbo');

function lane(name, args) {
  const started = Date.now();
  const child = spawn(TURBO, args, { cwd: root, stdio: 'inherit' });
  return new Promise((done) => {
    child.once('error', (error) => {
      console.error(`test-unit: ${name} could not start: ${error.message}`);
      done(1);
    });
    child.once('exit', (code, signal) => {
      const seconds = Math.round((Date.now() - started) / 1000);
      console.log(`test-unit: ${name} ended ${signal ?? `with ${code}`} after ${seconds} s`);
      done(code ?? 1);
    });
  });
}

// Both lanes are killed with this process (a Ctrl-C reaches the whole group anyway).
const statuses = await Promise.all([
  lane(LONGEST, ['run', 'test', `--filter=${LONGEST}`]),
  lane('every other package', ['run', 'test', `--filter=!${LONGEST}`, '--concurrency=2']),
]);
process.exit(statuses.find((s) => s !== 0) ?? 0);
