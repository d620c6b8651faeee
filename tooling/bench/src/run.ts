import { performance } from 'node:perf_hooks';
import { benchApiThroughput } from './api-throughput.bench';
import type { BenchContext } from './bench-context';
import { loadAverage, machineFacts, writeBenchmarksDoc } from './benchmarks-doc';
import { benchDbosPeer } from './dbos-peer.bench';
import { benchGovernedCallPglite } from './governed-call-pglite.bench';
import { benchGovernedCallPostgres } from './governed-call-postgres.bench';
import { benchLongRunStep } from './long-run-step.bench';
import { benchMcpCall } from './mcp-call.bench';
import { benchMcpHttpLongSession } from './mcp-http-long-session.bench';
import { benchMcpSessionOpen } from './mcp-session-open.bench';
import { benchPipelineStepsOneToSeven } from './pipeline-steps-1-7.bench';
import { displayUrl, probeServer, serverUrl } from './postgres-server';
import { benchWorkerMemory } from './worker-memory.bench';

const suites: Array<[string, (context: BenchContext) => Promise<string[]>]> = [
  ['pipeline steps 1–7', benchPipelineStepsOneToSeven],
  ['governed durable call vs commit floor (PostgreSQL)', benchGovernedCallPostgres],
  ['governed durable call vs DBOS Transact (PostgreSQL)', benchDbosPeer],
  ['governed durable call on PGlite', benchGovernedCallPglite],
  ['worker memory', benchWorkerMemory],
  ['MCP: governed echo over stdio vs the raw SDK call', benchMcpCall],
  ['MCP: session open with discovery of 500 tools', benchMcpSessionOpen],
  ['MCP: long session over Streamable HTTP (memory)', benchMcpHttpLongSession],
  ['API throughput: HTTP (api + worker processes) vs in-process Runtime.submitStep', benchApiThroughput],
  ['a step late in a long run vs an early step (Runtime.submitStep)', benchLongRunStep],
];

const startedAt = new Date();
const started = performance.now();
const loadAtStart = loadAverage();
const machine = machineFacts();
const server = serverUrl();
const probe = await probeServer(server);
const context: BenchContext = {
  postgres: probe.ok
    ? { reachable: true, server: displayUrl(server), version: probe.version }
    : { reachable: false, server: displayUrl(server), reason: probe.reason },
};
const postgres = context.postgres.reachable
  ? `${context.postgres.version} at ${context.postgres.server} (each suite on a fresh database, dropped at its end)`
  : `unreachable at ${context.postgres.server} (${context.postgres.reason}): PostgreSQL parts skipped`;

console.log(
  `veetbot bench — ${startedAt.toISOString()} — node ${machine.node} — ${machine.cpu} × ${machine.cores}, ${machine.memory} — load ${loadAtStart}`,
);
console.log(`PostgreSQL: ${postgres}`);
const results: Array<{ name: string; lines: string[] }> = [];
for (const [name, run] of suites) {
  console.log(`\n## ${name}`);
  let lines: string[];
  try {
    lines = await run(context);
  } catch (error) {
    // One suite failing must not hide the others' figures; the failure is a printed result.
    lines = [`FAILED: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`];
    process.exitCode = 1;
  }
  for (const line of lines) console.log(line);
  results.push({ name, lines });
}

const seconds = (performance.now() - started) / 1000;
const doc = await writeBenchmarksDoc({
  startedAt,
  seconds,
  command: `DATABASE_URL=${context.postgres.server} pnpm bench`,
  machine,
  postgres,
  loadAtStart,
  loadAtEnd: loadAverage(),
  suites: results,
});
console.log(`\n${seconds.toFixed(0)} s; results written to ${doc}`);
