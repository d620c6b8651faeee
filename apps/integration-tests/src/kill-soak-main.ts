import { parseArgs } from 'node:util';
import { CI_SOAK, formatAudit, runKillSoak, type SoakOptions } from './kill-soak';

/**
 * The long form of the kill soak (docs/adr/0067), run by hand: `pnpm soak --kills 1000`.
 * Every parameter is a flag, or the SOAK_* variable of the same name; DATABASE_URL names the
 * PostgreSQL server the soak makes its fresh database on. Prints the audit; exits 1 when a
 * promise broke (a duplicate, a lost or stuck call, a wrong settlement, or more than 10 % of the
 * UNCERTAIN calls left for a person).
 */
const { values } = parseArgs({
  options: {
    kills: { type: 'string' },
    workers: { type: 'string' },
    lanes: { type: 'string' },
    'writes-per-step': { type: 'string' },
    'steps-per-run': { type: 'string' },
    'api-kill-share': { type: 'string' },
    'kill-interval-ms': { type: 'string' },
    'lease-ttl-ms': { type: 'string' },
    'drain-timeout-ms': { type: 'string' },
    seed: { type: 'string' },
    help: { type: 'boolean' },
  },
});

if (values.help === true) {
  console.log(
    'pnpm soak [--kills N] [--workers N] [--lanes N] [--writes-per-step N] [--steps-per-run N] [--api-kill-share 0.1] [--kill-interval-ms 300-1500] [--lease-ttl-ms N] [--drain-timeout-ms N] [--seed N]\n(each also SOAK_<NAME>, e.g. SOAK_KILLS=1000; DATABASE_URL: the PostgreSQL server)',
  );
  process.exit(0);
}

function setting(name: keyof typeof values): string | undefined {
  const fromFlag = values[name];
  if (typeof fromFlag === 'string') return fromFlag;
  return process.env[`SOAK_${name.toUpperCase().replaceAll('-', '_')}`];
}

function number(name: keyof typeof values, fallback: number): number {
  const text = setting(name);
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0) {
    console.error(`error soak.invalid_setting: --${name} must be a non-negative number, not "${text}"`);
    process.exit(2);
  }
  return value;
}

const interval = setting('kill-interval-ms');
const [low, high] = interval === undefined ? CI_SOAK.killIntervalMs : interval.split('-').map(Number);
const kills = number('kills', 1_000);
const options: SoakOptions = {
  kills,
  workers: number('workers', 3),
  lanes: number('lanes', 8),
  writesPerStep: number('writes-per-step', CI_SOAK.writesPerStep),
  stepsPerRun: number('steps-per-run', CI_SOAK.stepsPerRun),
  apiKillShare: number('api-kill-share', CI_SOAK.apiKillShare),
  killIntervalMs: [low ?? 300, high ?? low ?? 1_500],
  leaseTtlMs: number('lease-ttl-ms', CI_SOAK.leaseTtlMs),
  drainTimeoutMs: number('drain-timeout-ms', 300_000),
  ...(setting('seed') === undefined ? {} : { seed: number('seed', 0) }),
  log: (line) => console.log(`[${new Date().toISOString()}] ${line}`),
};
if (!process.env.DATABASE_URL) {
  console.error('error soak.database_missing: set DATABASE_URL to a PostgreSQL server (the soak makes a fresh database on it)');
  process.exit(2);
}
console.log(`kill soak: ${JSON.stringify({ ...options, log: undefined })}`);
const audit = await runKillSoak(options);
console.log(formatAudit(audit));
const share = audit.uncertain === 0 ? 0 : audit.leftForPerson / audit.uncertain;
const passed = audit.problems.length === 0 && audit.duplicates === 0 && audit.lost === 0 && audit.stuck === 0 && share <= 0.1;
console.log(passed ? 'PASS' : 'FAIL');
process.exit(passed ? 0 : 1);
