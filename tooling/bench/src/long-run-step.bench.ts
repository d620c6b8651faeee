import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { migrate, openDatabase } from '@veetbot/store-postgres';
import { skippedLine, type BenchContext } from './bench-context';
import { fmt } from './harness';
import { targetLine } from './targets';
import { composeRuntime, openRuntimeTenant } from './runtime-scene';
import { scratchDatabase, serverUrl } from './postgres-server';

/** Earlier calls in the long run: steps of a full parallel batch (the default cap, 8). */
const FILL_STEPS = 250;
const FILL_BATCH = 8;
const ROUNDS = 7;
const STEPS_PER_ROUND = 15;

/**
 * How a step's cost grows with its run: one-call steps on a fresh run against one-call steps
 * on a run that already holds 2,000 calls, in alternating rounds, through Runtime.submitStep
 * on PostgreSQL. Before each step the runtime derives the circuit breakers from the run's
 * earlier rows (ADR 0010); ADR 0016 has the database count them instead of reading them, so
 * the late step should cost about what the early one does. No target in the issues: printed
 * so a regression to per-step reads of the whole run shows as a ratio.
 */
export async function benchLongRunStep(context: BenchContext): Promise<string[]> {
  if (!context.postgres.reachable) return [skippedLine(context.postgres, 'long-run step cost')];
  const scratch = await scratchDatabase(serverUrl(), 'veetbot_bench_long_run');
  const dataDir = await mkdtemp(join(tmpdir(), 'veetbot-bench-long-run-'));
  const database = await openDatabase({ url: scratch.url, poolSize: 10 });
  try {
    await migrate(database);
    const runtime = composeRuntime(database, dataDir);
    const { tenantId, principal, runIds } = await openRuntimeTenant(runtime, database, {
      name: 'Long-run bench',
      agentId: 'bench-long-run',
      scopes: [],
      runs: 2,
    });
    const [fresh, long] = runIds as [string, string];
    // A few hundred bytes of arguments per call, as an agent's calls carry.
    const expression = (n: number) => `${n} + ${Array.from({ length: 60 }, (_, i) => `${i}*2`).join(' + ')}`;
    const next = new Map<string, number>([
      [fresh, 1],
      [long, 1],
    ]);
    const step = async (runId: string, calls: number): Promise<void> => {
      const stepNumber = next.get(runId)!;
      next.set(runId, stepNumber + 1);
      const outcome = await runtime.submitStep({
        tenantId,
        runId,
        stepNumber,
        principal,
        calls: Array.from({ length: calls }, (_, i) => ({
          callId: `call_${stepNumber}_${i}`,
          toolName: 'math.evaluate',
          arguments: { expression: expression(stepNumber * 10 + i) },
          contextTrust: ['user' as const],
        })),
      });
      if (outcome.items.some((item) => item.outcome.status !== 'succeeded'))
        throw new Error(`a step did not succeed: ${JSON.stringify(outcome).slice(0, 300)}`);
    };

    const fillStarted = performance.now();
    for (let i = 0; i < FILL_STEPS; i++) await step(long, FILL_BATCH);
    const fillSeconds = (performance.now() - fillStarted) / 1000;
    const earlier = FILL_STEPS * FILL_BATCH;

    const msPerStep = async (runId: string): Promise<number> => {
      const started = performance.now();
      for (let i = 0; i < STEPS_PER_ROUND; i++) await step(runId, 1);
      return (performance.now() - started) / STEPS_PER_ROUND;
    };
    await msPerStep(fresh);
    await msPerStep(long);
    const early: number[] = [];
    const late: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      if (round % 2 === 0) {
        early.push(await msPerStep(fresh));
        late.push(await msPerStep(long));
      } else {
        late.push(await msPerStep(long));
        early.push(await msPerStep(fresh));
      }
    }
    const earlyMs = median(early);
    const lateMs = median(late);
    return [
      `subject: a one-call step (math.evaluate) through Runtime.submitStep after ${fmt(earlier)} earlier calls in its run (${FILL_STEPS} steps of ${FILL_BATCH}, made in ${fillSeconds.toFixed(1)} s); baseline: the same step early in a fresh run; medians of ${ROUNDS} alternating rounds of ${STEPS_PER_ROUND} steps`,
      `step early in a run ${earlyMs.toFixed(2)} ms, after ${fmt(earlier)} calls ${lateMs.toFixed(2)} ms`,
      targetLine('late-vs-early-step', lateMs / earlyMs),
    ];
  } finally {
    await database.close();
    await scratch.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
