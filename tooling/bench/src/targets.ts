/**
 * Issue 14's goals: each printed by `pnpm bench` as exactly one line
 * `target <name>: <measured> (goal <goal>): met | NOT met`, so anyone can grep the verdicts.
 * Every goal is a ratio measured in the same run, or an absolute figure the issue names; the
 * absolute figures around them are context only.
 */
export type GoalDirection = 'at most' | 'at least' | 'below';

export interface Goal {
  readonly name: string;
  readonly direction: GoalDirection;
  readonly value: number;
  /** How the goal and the measured figure are written: a ratio, a percentage, ms, MB, calls/s or s. */
  readonly unit: '×' | '%' | 'ms' | 'MB' | 'calls/s' | 's';
  /** Which issue the goal comes from, and what is measured against what (for the README). */
  readonly what: string;
}

export const GOALS = [
  {
    name: 'step-vs-call',
    direction: 'at most',
    value: 1.5,
    unit: '×',
    what: 'one-call step through Runtime.submitStep, sequential: step time / governed call time',
  },
  {
    name: 'step-vs-dbos-16',
    direction: 'at least',
    value: 1.0,
    unit: '×',
    what: 'in-process one-call steps at 16 callers / DBOS one-step workflows at 16 callers (throughput)',
  },
  {
    name: 'http-vs-inprocess-16',
    direction: 'at least',
    value: 70,
    unit: '%',
    what: 'one-call steps through HTTP (api + worker) / in process, 16 clients (throughput)',
  },
  {
    name: 'http-p99-16',
    direction: 'at most',
    value: 4,
    unit: '×',
    what: 'p99 step latency through HTTP at 16 clients / sequential step latency through HTTP',
  },
  {
    name: 'call-vs-dbos-seq',
    direction: 'at least',
    value: 2.0,
    unit: '×',
    what: 'governed call / DBOS one-step workflow, sequential (throughput)',
  },
  {
    name: 'call-vs-dbos-8',
    direction: 'at least',
    value: 1.5,
    unit: '×',
    what: 'governed call / DBOS one-step workflow, 8 callers (throughput)',
  },
  {
    name: 'late-vs-early-step',
    direction: 'at most',
    value: 1.2,
    unit: '×',
    what: 'one-call step after 2,000 calls in its run / early step',
  },
  { name: 'mcp-own-share', direction: 'at most', value: 0.5, unit: 'ms', what: 'governed MCP call − governed builtin call − raw SDK call' },
  { name: 'worker-rss-10k', direction: 'below', value: 150, unit: 'MB', what: 'RSS of the built worker process after 10,000 calls' },
  { name: 'steps-1-7-vs-floor', direction: 'at most', value: 3, unit: '×', what: 'steps 1–7 / bare Ajv + sha256' },
  { name: 'steps-1-7-calls-per-s', direction: 'at least', value: 50_000, unit: 'calls/s', what: 'steps 1–7 on one core' },
  { name: 'session-open-500', direction: 'below', value: 1, unit: 's', what: 'MCP session open with discovery of 500 tools (median)' },
  {
    name: 'gateway-vs-steps-route',
    direction: 'at most',
    value: 1.2,
    unit: '×',
    what: 'issue 24: a tools/call through /mcp (2026-07-28, SDK 2.x client) / the same one-call step through POST /v1/runs/{id}/steps, sequential, p50',
  },
  {
    name: 'scale-2-vs-1-workers',
    direction: 'at least',
    value: 1.0,
    unit: '×',
    what: 'issue 26: steps/s draining one backlog with 2 worker processes / with 1, one PostgreSQL (docs/adr/0070: on 2 cores, no loss)',
  },
  {
    name: 'scale-4-vs-1-workers',
    direction: 'at least',
    value: 0.9,
    unit: '×',
    what: 'issue 26: the same with 4 worker processes / 1 (docs/adr/0070: on 2 cores, within 10%)',
  },
  {
    name: 'noisy-neighbour-p99',
    direction: 'at most',
    value: 2.0,
    unit: '×',
    what: "issue 26: a quiet tenant's p99 step latency beside a tenant flooding the queue / its p99 alone (fair claims, a per-tenant quota)",
  },
  {
    name: 'http-step-vs-restate-seq',
    direction: 'at most',
    value: 1.0,
    unit: '×',
    what: 'issue 31: our one-call step through HTTP (api + worker), sequential, p50 latency / a Restate call through its ingress (one ctx.run), sequential, p50 (docs/adr/0073)',
  },
  {
    name: 'http-vs-restate-16',
    direction: 'at least',
    value: 1.0,
    unit: '×',
    what: 'issue 31: our one-call steps through HTTP at 16 clients / Restate calls (one ctx.run) at 16 callers, throughput (docs/adr/0073)',
  },
  {
    name: 'pg-cpu-step-vs-dbos',
    direction: 'at most',
    value: 1.0,
    unit: '×',
    what: "issue 27: PostgreSQL CPU per in-process one-call step / per DBOS one-step workflow, 16 callers, alternating windows of one run (the bench's own cluster, its processes read from /proc)",
  },
  {
    name: 'pg-cpu-http-vs-inprocess',
    direction: 'at most',
    value: 1.3,
    unit: '×',
    what: "issue 27: PostgreSQL CPU per one-call step through HTTP (api + worker) / per step in process, 16 clients, the HTTP suite's alternating windows",
  },
] as const satisfies readonly Goal[];

export type GoalName = (typeof GOALS)[number]['name'];

export function goalOf(name: GoalName): Goal {
  const goal = GOALS.find((g) => g.name === name);
  if (goal === undefined) throw new Error(`no goal named ${name}`);
  return goal;
}

/** A figure in the goal's unit: 1.23×, 71%, 0.42 ms, 131.5 MB, 61,234 calls/s, 0.41 s. */
export function formatFigure(value: number, unit: Goal['unit']): string {
  switch (unit) {
    case '×':
      return `${value.toFixed(2)}×`;
    case '%':
      return `${value.toFixed(0)}%`;
    case 'ms':
      return `${value.toFixed(2)} ms`;
    case 'MB':
      return `${value.toFixed(1)} MB`;
    case 'calls/s':
      return `${Math.round(value).toLocaleString('en-US')} calls/s`;
    case 's':
      return `${value.toFixed(2)} s`;
  }
}

export function isMet(goal: Goal, measured: number): boolean {
  if (!Number.isFinite(measured)) return false;
  if (goal.direction === 'at most') return measured <= goal.value;
  if (goal.direction === 'at least') return measured >= goal.value;
  return measured < goal.value;
}

export function goalText(goal: Goal): string {
  const sign = goal.direction === 'at most' ? '≤' : goal.direction === 'at least' ? '≥' : '<';
  return `${sign} ${formatFigure(goal.value, goal.unit)}`;
}

/** `target <name>: <measured> (goal <goal>): met | NOT met` */
export function targetLine(name: GoalName, measured: number): string {
  const goal = goalOf(name);
  return `target ${name}: ${formatFigure(measured, goal.unit)} (goal ${goalText(goal)}): ${isMet(goal, measured) ? 'met' : 'NOT met'}`;
}

/** A goal whose benchmark could not measure it (skipped, failed): still one line, never "met". */
export function unmeasuredLine(name: GoalName, why: string): string {
  return `target ${name}: not measured, ${why} (goal ${goalText(goalOf(name))}): NOT met`;
}

/** The goal names a block of output lines gave a verdict for. */
export function targetsIn(lines: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (const line of lines) {
    const match = /^target ([a-z0-9-]+): /.exec(line);
    if (match !== null) names.add(match[1]!);
  }
  return names;
}
