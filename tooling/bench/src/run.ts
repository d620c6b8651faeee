import { benchApiThroughput } from './api-throughput.bench';
import type { BenchContext, OwnedCluster } from './bench-context';
import { BenchUsageError, runBench, type Suite } from './bench-run';
import { loadAverage, machineFacts, writeBenchmarksDoc } from './benchmarks-doc';
import { benchDbosPeer } from './dbos-peer.bench';
import { benchGatewayVsStepsRoute } from './gateway-vs-steps.bench';
import { benchGovernedCallPglite } from './governed-call-pglite.bench';
import { benchGovernedCallPostgres } from './governed-call-postgres.bench';
import { benchLongRunStep } from './long-run-step.bench';
import { benchMcpCall } from './mcp-call.bench';
import { benchMcpHttpLongSession } from './mcp-http-long-session.bench';
import { benchMcpSessionOpen } from './mcp-session-open.bench';
import { benchNoisyNeighbour } from './noisy-neighbour.bench';
import { benchPipelineStepsOneToSeven } from './pipeline-steps-1-7.bench';
import { benchRestatePeer } from './restate-peer.bench';
import { benchScaleOut } from './scale-out.bench';
import { benchWorkspaceHelper } from './workspace-helper.bench';
import { displayUrl, probeServer, serverUrl } from './postgres-server';
import { recordedSceneCosts, statementTablesMarkdown } from './statement-stats';

/** In the order they run; `pnpm bench <key or goal name> …` runs only those. */
const suites: Suite[] = [
  {
    key: 'steps-1-7',
    title: 'pipeline steps 1–7',
    goals: ['steps-1-7-vs-floor', 'steps-1-7-calls-per-s'],
    run: benchPipelineStepsOneToSeven,
  },
  {
    key: 'dbos',
    title: 'the governed call and a one-call step (Runtime.submitStep) vs DBOS Transact (PostgreSQL)',
    goals: ['call-vs-dbos-seq', 'call-vs-dbos-8', 'step-vs-call', 'step-vs-dbos-16', 'pg-cpu-step-vs-dbos'],
    run: benchDbosPeer,
  },
  {
    key: 'late-step',
    title: 'a step late in a long run vs an early step (Runtime.submitStep)',
    goals: ['late-vs-early-step'],
    run: benchLongRunStep,
  },
  {
    key: 'http',
    title: 'steps through HTTP (built api + worker processes) vs in process',
    goals: ['http-vs-inprocess-16', 'http-p99-16', 'worker-rss-10k', 'pg-cpu-http-vs-inprocess'],
    run: benchApiThroughput,
  },
  {
    key: 'restate',
    title: 'steps through HTTP (built api + worker) vs Restate (restate-server + a one-ctx.run service, through its ingress)',
    goals: ['http-step-vs-restate-seq', 'http-vs-restate-16'],
    run: benchRestatePeer,
  },
  {
    key: 'gateway',
    title: 'MCP gateway face: a tools/call through /mcp vs the same step through the steps route (built api + worker)',
    goals: ['gateway-vs-steps-route'],
    run: benchGatewayVsStepsRoute,
  },
  {
    key: 'scale',
    title: 'scale-out: 1, 2 and 4 worker processes on one PostgreSQL',
    goals: ['scale-2-vs-1-workers', 'scale-4-vs-1-workers'],
    run: benchScaleOut,
  },
  {
    key: 'noisy',
    title: 'noisy neighbour: a quiet tenant beside a tenant flooding the queue (fair claims, per-tenant quota)',
    goals: ['noisy-neighbour-p99'],
    run: benchNoisyNeighbour,
  },
  { key: 'mcp-call', title: 'MCP: governed echo over stdio vs the raw SDK call', goals: ['mcp-own-share'], run: benchMcpCall },
  { key: 'session-open', title: 'MCP: session open with discovery of 500 tools', goals: ['session-open-500'], run: benchMcpSessionOpen },
  { key: 'floor', title: 'governed durable call vs commit floor (PostgreSQL)', goals: [], run: benchGovernedCallPostgres },
  { key: 'pglite', title: 'governed durable call on PGlite', goals: [], run: benchGovernedCallPglite },
  {
    key: 'workspace',
    title: 'workspace files through the confined helper vs the path opened in process (docs/adr/0058)',
    goals: [],
    run: benchWorkspaceHelper,
  },
  { key: 'mcp-long-session', title: 'MCP: long session over Streamable HTTP (memory)', goals: [], run: benchMcpHttpLongSession },
];

const startedAt = new Date();
const loadAtStart = loadAverage();
const machine = machineFacts();
// Issue 27 (docs/adr/0072): bin/bench.ts started the bench's own cluster and named it here.
const owned = ownedCluster();
const notOwned =
  process.env.BENCH_CLUSTER_UNAVAILABLE === undefined
    ? 'BENCH_POSTGRES=external'
    : `its own cluster did not start (${process.env.BENCH_CLUSTER_UNAVAILABLE}), so DATABASE_URL's server`;
const server = serverUrl();
const probe = await probeServer(server);
const context: BenchContext = {
  postgres: probe.ok
    ? { reachable: true, server: displayUrl(server), version: probe.version }
    : { reachable: false, server: displayUrl(server), reason: probe.reason },
  ...(owned === null ? {} : { cluster: owned }),
};
const where =
  owned === null
    ? `${notOwned}, at ${context.postgres.server}`
    : `the bench's own throwaway cluster at ${context.postgres.server} (pg_stat_statements, track = all)`;
const postgres = context.postgres.reachable
  ? `${context.postgres.version} on ${where} (each suite on a fresh database, dropped at its end)`
  : `unreachable on ${where} (${context.postgres.reason}): PostgreSQL parts skipped`;

try {
  const { ok } = await runBench({
    argv: process.argv.slice(2),
    suites,
    context,
    header: [
      `veetbot bench — ${startedAt.toISOString()} — node ${machine.node} — ${machine.cpu} × ${machine.cores}, ${machine.memory} — load ${loadAtStart}`,
      `PostgreSQL: ${postgres}`,
    ],
    record: { startedAt, machine, postgres, loadAtStart },
    command: owned === null ? `BENCH_POSTGRES=external DATABASE_URL=${context.postgres.server} pnpm bench` : 'pnpm bench',
    loadAverage,
    writeDoc: (record) => writeBenchmarksDoc({ ...record, tables: statementTablesMarkdown(recordedSceneCosts()) }),
    log: (line) => console.log(line),
  });
  if (!ok) process.exitCode = 1;
} catch (error) {
  if (!(error instanceof BenchUsageError)) throw error;
  console.error(`pnpm bench [--record] [benchmark …]: ${error.message}`);
  process.exitCode = 2;
}

function ownedCluster(): OwnedCluster | null {
  const pid = Number(process.env.BENCH_CLUSTER_POSTMASTER_PID);
  const statsUrl = process.env.BENCH_CLUSTER_STATS_URL;
  if (!Number.isInteger(pid) || pid <= 0 || statsUrl === undefined || statsUrl === '') return null;
  return { postmasterPid: pid, statsUrl };
}
