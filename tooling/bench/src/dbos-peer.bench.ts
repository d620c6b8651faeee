import { migrate, openDatabase } from '@veetbot/store-postgres';
import type { BenchContext } from './bench-context';
import { skippedLine } from './bench-context';
import { countPgStatements } from './commit-counter';
import { openDbosPeer } from './dbos-peer';
import { CONCURRENT_CALLERS } from './governed-call-postgres.bench';
import { openGovernedScene } from './governed-scene';
import { compare, fmt } from './harness';
import { targetLine, unmeasuredLine } from './targets';
import {
  cpuPerOp,
  measureWindow,
  openStatementStats,
  recordSceneCost,
  SceneTally,
  statementLines,
  type SceneCost,
} from './statement-stats';
import { scratchDatabase, serverUrl } from './postgres-server';
import { composeRuntime, openRuntimeTenant } from './runtime-scene';
import type { DbosPeer } from './dbos-peer';
import type { GovernedScene } from './governed-scene';
import { SUBJECT_TOOL } from './governed-scene';
import type { Database } from '@veetbot/store-postgres';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Issue 14: 16 concurrent callers for the step against DBOS. */
export const STEP_CALLERS = 16;

/**
 * Issue 3, Performance, second bullet (issue 14's goals call-vs-dbos-seq ≥ 2.0×, call-vs-dbos-8 ≥ 1.5×): the governed call against the peer a user would pick
 * instead — a DBOS Transact workflow with one no-op step on the same PostgreSQL server (its
 * system database a fresh database of its own), sequential and with eight concurrent callers,
 * measured in alternating rounds with the governed call. Target: governed throughput ≥ 2.5 ×
 * DBOS's. If DBOS cannot run here, the line says why and no figure is printed.
 */
export async function benchDbosPeer(context: BenchContext): Promise<string[]> {
  if (!context.postgres.reachable) return [skippedLine(context.postgres, 'governed call vs DBOS Transact')];
  const ours = await scratchDatabase(serverUrl(), 'veetbot_bench');
  const theirs = await scratchDatabase(serverUrl(), 'veetbot_bench_dbos');
  const database = await openDatabase({ url: ours.url, poolSize: 10 });
  try {
    await migrate(database);
    const scene = await openGovernedScene(database, { callers: CONCURRENT_CALLERS });
    for (let i = 0; i < 10; i++) await scene.call(0);
    const opened = await openDbosPeer(theirs);
    if (!opened.ok) {
      return [`DBOS Transact could not run here, so there is no peer figure: ${opened.reason}`];
    }
    const { peer } = opened;
    try {
      for (let i = 0; i < 10; i++) await peer.call();
      const dbosCost = await countPgStatements(10, () => peer.call());
      const lines = [
        `peer: @dbos-inc/dbos-sdk ${opened.version}, a workflow with one no-op step (DBOS.registerWorkflow + DBOS.runStep), invoked directly, system database on the same server, pool 10`,
        `DBOS workflow: ${dbosCost.commitStatements} BEGIN…COMMIT transactions and ${dbosCost.statements} statements in all per workflow (counted at pg's Client.query)`,
      ];
      const seq = await compare(
        { name: 'dbos', fn: () => peer.call() },
        { name: 'governed', fn: () => scene.call(0) },
        { batch: 40, rounds: 7, warmup: 1 },
      );
      const seqRatio = seq.subject.opsPerSecond / seq.baseline.opsPerSecond;
      lines.push(
        `sequential: governed ${fmt(seq.subject.opsPerSecond)} calls/s, DBOS ${fmt(seq.baseline.opsPerSecond)} workflows/s`,
        targetLine('call-vs-dbos-seq', seqRatio),
      );
      const conc = await compare(
        { name: 'dbos', fn: () => peer.call() },
        { name: 'governed', fn: (worker) => scene.call(worker) },
        { batch: 64, rounds: 5, warmup: 1, concurrency: CONCURRENT_CALLERS },
      );
      const concRatio = conc.subject.opsPerSecond / conc.baseline.opsPerSecond;
      lines.push(
        `${CONCURRENT_CALLERS} concurrent callers: governed ${fmt(conc.subject.opsPerSecond)} calls/s, DBOS ${fmt(conc.baseline.opsPerSecond)} workflows/s`,
        targetLine('call-vs-dbos-8', concRatio),
      );
      // The call's figures stand even if the step's part fails.
      try {
        lines.push(...(await stepLines(context, database, peer, scene, { ours: ours.name, theirs: theirs.name })));
      } catch (error) {
        lines.push(`FAILED (the step part): ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`);
      }
      return lines;
    } finally {
      await peer.close();
      await scene.close();
    }
  } finally {
    await database.close();
    await ours.drop();
    await theirs.drop();
  }
}

/**
 * Issue 14, goals 1 and 2: what a user waits for is the step. A one-call step of the same tool
 * through `Runtime.submitStep` (composed as the worker composes it: step row, run lease,
 * session, breaker tally, the call, step completion), sequential on one run against the
 * governed call alone (step-vs-call: step time / call time), and at 16 concurrent callers, each
 * on its own run, against DBOS one-step workflows at 16 callers (step-vs-dbos-16: throughput).
 */
async function stepLines(
  context: BenchContext,
  database: Database,
  peer: DbosPeer,
  scene: GovernedScene,
  databases: { ours: string; theirs: string },
): Promise<string[]> {
  const dataDir = await mkdtemp(join(tmpdir(), 'veetbot-bench-step-'));
  try {
    const runtime = composeRuntime(database, dataDir);
    const { tenantId, principal, runIds } = await openRuntimeTenant(runtime, database, {
      name: 'Step bench',
      agentId: 'bench-step',
      scopes: ['demo.write'],
      runs: STEP_CALLERS + 1,
    });
    const next = runIds.map(() => 1);
    // Caller i of the concurrent side owns run i; the sequential side owns the last run.
    const step = async (run: number): Promise<void> => {
      const stepNumber = next[run]!++;
      const outcome = await runtime.submitStep({
        tenantId,
        runId: runIds[run]!,
        stepNumber,
        principal,
        // Distinct arguments per step: identical calls repeated would trip the loop breaker.
        calls: [
          {
            callId: `call_${stepNumber}`,
            toolName: SUBJECT_TOOL,
            arguments: { line: `effect ${run} ${stepNumber}` },
            contextTrust: ['user'],
          },
        ],
      });
      if (outcome.items[0]?.outcome.status !== 'succeeded')
        throw new Error(`a step did not succeed: ${JSON.stringify(outcome).slice(0, 300)}`);
    };
    for (let i = 0; i < 10; i++) await step(STEP_CALLERS);
    const stepCost = await countPgStatements(10, () => step(STEP_CALLERS));
    const seq = await compare(
      { name: 'governed call', fn: () => scene.call(0) },
      { name: 'step', fn: () => step(STEP_CALLERS) },
      { batch: 30, rounds: 7, warmup: 1 },
    );
    const conc = await compare(
      { name: 'dbos', fn: () => peer.call() },
      { name: 'step', fn: (worker) => step(worker) },
      { batch: 96, rounds: 5, warmup: 1, concurrency: STEP_CALLERS },
    );
    const costs = await postgresCostLines(context, databases, step, () => peer.call());
    const ms = (ns: number) => `${(ns / 1e6).toFixed(2)} ms`;
    return [
      `step: a one-call step of ${SUBJECT_TOOL} through Runtime.submitStep (step row, run lease, session, breaker tally, the governed call, step completion): ${fmt2(stepCost.commitStatements)} BEGIN…COMMIT transactions and ${fmt2(stepCost.statements)} statements in all per step (counted at pg's Client.query; the call's hot-path functions are autocommitted statements)`,
      `sequential: step ${ms(seq.subject.nsPerOp)}/step (${fmt(seq.subject.opsPerSecond)} steps/s), governed call alone ${ms(seq.baseline.nsPerOp)}/call (${fmt(seq.baseline.opsPerSecond)} calls/s)`,
      targetLine('step-vs-call', seq.ratio),
      `${STEP_CALLERS} concurrent callers (a run each): steps ${fmt(conc.subject.opsPerSecond)} steps/s, DBOS ${fmt(conc.baseline.opsPerSecond)} workflows/s`,
      targetLine('step-vs-dbos-16', conc.subject.opsPerSecond / conc.baseline.opsPerSecond),
      ...costs,
    ];
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Issue 27: windows of 96 operations at 16 callers, step and DBOS alternating, 4 rounds each. */
const COST_ROUNDS = 4;
const COST_BATCH = 96;

/**
 * Issue 27, items 1 and 2: what PostgreSQL spends per one-call step and per DBOS workflow, from
 * windows where only one side runs (the server's CPU is the whole cluster's, read from /proc;
 * the statements are those of the side's own database, pg_stat_statements reset per window).
 * pg-cpu-step-vs-dbos: step CPU / workflow CPU.
 */
async function postgresCostLines(
  context: BenchContext,
  databases: { ours: string; theirs: string },
  step: (caller: number) => Promise<void>,
  workflow: () => Promise<void>,
): Promise<string[]> {
  const stats = await openStatementStats(context);
  const steps = new SceneTally(`one-call step in process (Runtime.submitStep), ${STEP_CALLERS} callers`);
  const workflows = new SceneTally(`DBOS one-step workflow, ${STEP_CALLERS} callers`);
  let costs: [SceneCost, SceneCost];
  try {
    for (let round = 0; round < COST_ROUNDS; round++) {
      const stepWindow = () => measureWindow(context, stats, steps, [databases.ours], () => drain(step, COST_BATCH, STEP_CALLERS));
      const dbosWindow = () =>
        measureWindow(context, stats, workflows, [databases.theirs], () => drain(workflow, COST_BATCH, STEP_CALLERS));
      // Alternate which goes first, as compare() does.
      if (round % 2 === 0) {
        await stepWindow();
        await dbosWindow();
      } else {
        await dbosWindow();
        await stepWindow();
      }
    }
    costs = [steps.cost(), workflows.cost()];
  } finally {
    await stats?.close();
  }
  for (const cost of costs) recordSceneCost(cost);
  const ratio = cpuPerOp(costs[0]) / cpuPerOp(costs[1]);
  return [
    ...costs.flatMap(statementLines),
    Number.isNaN(ratio)
      ? unmeasuredLine('pg-cpu-step-vs-dbos', "PostgreSQL's /proc figures were unreadable")
      : targetLine('pg-cpu-step-vs-dbos', ratio),
  ];
}

/** `total` operations by `callers` concurrent callers drawing from one count; returns `total`. */
async function drain(operation: (caller: number) => Promise<void>, total: number, callers: number): Promise<number> {
  let remaining = total;
  await Promise.all(
    Array.from({ length: callers }, async (_, caller) => {
      while (remaining > 0) {
        remaining -= 1;
        await operation(caller);
      }
    }),
  );
  return total;
}

function fmt2(n: number | null): string {
  if (n === null || Number.isNaN(n)) return 'n/a';
  return Number.isInteger(n) ? String(n) : n.toFixed(1);
}
