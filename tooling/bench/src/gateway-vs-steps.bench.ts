import { performance } from 'node:perf_hooks';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { percentile } from './api-throughput.bench';
import { skippedLine, type BenchContext } from './bench-context';
import { startSplitScene } from './split-scene';
import { targetLine, unmeasuredLine } from './targets';

/**
 * Issue 24, item 6: what the MCP gateway face (/mcp, docs/adr/0044) adds to a call over the
 * steps route it stands on. The built api (`--api-only`) and worker processes on a fresh
 * PostgreSQL database, as api-throughput runs them; one session. Baseline: one-call steps of
 * `math.evaluate` through POST /v1/runs/{id}/steps (@veetbot/client, waiting for the outcome),
 * sequential, on a run of their own. Subject: the same call through /mcp by the MCP SDK's 2.x
 * client pinned to 2026-07-28 (stateless; Veetbot-Run-Id names a second run of the session).
 * For context, a 2025-11-25 client (stateful, its own MCP session, initialize naming a third
 * run). ROUNDS alternating rounds of CALLS sequential calls per side, after a warm-up each;
 * the figure is the median over rounds of (gateway p50 / steps p50). Goal: gateway-vs-steps-route ≤ 1.2×.
 */
const ROUNDS = 8;
const CALLS = Number(process.env.BENCH_GATEWAY_CALLS ?? '20');
const WARMUP = 20;
const TOOL = 'math.evaluate';

export async function benchGatewayVsStepsRoute(context: BenchContext): Promise<string[]> {
  if (!context.postgres.reachable) return [skippedLine(context.postgres, 'gateway vs steps route')];
  const scene = await startSplitScene({ name: 'gateway', workerEnv: { VEETBOT_WORKER_POLL_MS: '200' } });
  const { scratch, port, key, client: rest } = scene;
  const clients: Client[] = [];
  try {
    const session = await rest.openSession({ agent_id: 'bench-gateway', enabled_tools: [TOOL] });
    const [restRun, modernRun, legacyRun] = await Promise.all(
      [0, 1, 2].map(() => rest.createRun({ session_id: session.id, deadline_seconds: 3_600 })),
    );
    const url = new URL(`http://127.0.0.1:${port}/mcp`);
    const mcpClient = async (runId: string, era: 'modern' | 'legacy'): Promise<Client> => {
      const transport = new StreamableHTTPClientTransport(url, {
        requestInit: { headers: { Authorization: `Bearer ${key}`, 'Veetbot-Run-Id': runId } },
      });
      const client = new Client(
        { name: 'veetbot-bench', version: '1.0.0' },
        era === 'modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
      );
      await client.connect(transport);
      clients.push(client);
      return client;
    };
    const modern = await mcpClient(modernRun!.id, 'modern');
    const legacy = await mcpClient(legacyRun!.id, 'legacy');

    let restStep = 0;
    const viaSteps = async (n: number) => {
      restStep += 1;
      const outcome = await rest.submitStepAndWait(restRun!.id, {
        step_number: restStep,
        calls: [{ call_id: `rest_${n}`, tool_name: TOOL, arguments: { expression: `${n} * 2` }, context_trust: ['user'] }],
        wait_seconds: 30,
      });
      if (outcome.items[0]?.outcome.status !== 'succeeded')
        throw new Error(`step did not succeed: ${JSON.stringify(outcome).slice(0, 300)}`);
    };
    const viaGateway = (client: Client, prefix: string) => async (n: number) => {
      const result = await client.callTool({
        name: TOOL,
        arguments: { expression: `${n} * 2` },
        _meta: { 'veetbot/call_id': `${prefix}_${n}`, 'veetbot/context_trust': ['user'] },
      });
      if (result.isError === true) throw new Error(`gateway call did not succeed: ${JSON.stringify(result).slice(0, 300)}`);
    };
    const sides = [
      { name: 'steps', call: viaSteps, latencies: [] as number[], rounds: [] as number[] },
      { name: 'modern', call: viaGateway(modern, 'mcp'), latencies: [] as number[], rounds: [] as number[] },
      { name: 'legacy', call: viaGateway(legacy, 'mcp25'), latencies: [] as number[], rounds: [] as number[] },
    ];
    let n = 0;
    for (const side of sides) for (let i = 0; i < WARMUP; i++) await side.call(++n);
    for (let round = 0; round < ROUNDS; round++) {
      // The order turns every round, so drift on the machine hits every side alike.
      const order = sides.map((_, i) => sides[(i + round) % sides.length]!);
      for (const side of order) {
        const round: number[] = [];
        for (let i = 0; i < CALLS; i++) {
          const t0 = performance.now();
          await side.call(++n);
          round.push(performance.now() - t0);
        }
        side.latencies.push(...round);
        side.rounds.push(percentile(round, 50));
      }
    }
    const p50 = (i: number) => percentile(sides[i]!.latencies, 50);
    const p90 = (i: number) => percentile(sides[i]!.latencies, 90);
    // Per round, the two sides ran back to back under the same load: the median of the rounds'
    // ratios is the figure (as harness.ts compares), the pooled p50s are context.
    const perRound = sides[1]!.rounds.map((g, r) => g / sides[0]!.rounds[r]!);
    const ratio = percentile(perRound, 50);
    return [
      `PostgreSQL fresh database ${scratch.name}; built api (--api-only) and worker processes under plain node; one session, a run per side; ${TOOL} one call at a time; ${ROUNDS} alternating rounds of ${CALLS} calls per side after ${WARMUP} warm-up calls each`,
      `steps route (POST /v1/runs/{id}/steps, waiting): p50 ${p50(0).toFixed(1)} ms, p90 ${p90(0).toFixed(1)} ms (${sides[0]!.latencies.length} calls)`,
      `gateway, 2026-07-28 (stateless, Veetbot-Run-Id): p50 ${p50(1).toFixed(1)} ms, p90 ${p90(1).toFixed(1)} ms (${sides[1]!.latencies.length} calls)`,
      `gateway, 2025-11-25 (stateful session; context): p50 ${p50(2).toFixed(1)} ms, p90 ${p90(2).toFixed(1)} ms (${sides[2]!.latencies.length} calls)`,
      `gateway / steps route p50, round by round: ${perRound.map((r) => `${r.toFixed(2)}×`).join(' ')}; pooled p50s ${(p50(1) / p50(0)).toFixed(2)}×`,
      Number.isFinite(ratio)
        ? targetLine('gateway-vs-steps-route', ratio)
        : unmeasuredLine('gateway-vs-steps-route', 'no calls were measured'),
    ];
  } finally {
    await Promise.allSettled(clients.map((c) => c.close()));
    await scene.close();
  }
}
