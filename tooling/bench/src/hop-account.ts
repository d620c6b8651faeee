/**
 * Issue 31 item 3 (docs/adr/0076): where a sequential HTTP step spends its time, hop by hop. The
 * api and worker processes record their statements, notifications and requests on the machine's
 * monotonic clock (hop-probe-preload.mjs); the bench records when each client request went out
 * and its answer came back on the same clock. Each step's milestones are found in its window,
 * each after the milestone that causes it, and the account gives, per milestone, its offset from
 * the client's send (p50) and the mean time since the milestone before it (means add up, so the
 * hops sum to the mean step).
 */

export type ProbeProcess = 'api' | 'worker';
export type ProbeKind = 'qs' | 'qe' | 'n' | 'rq' | 'rs';

export interface ProbeEvent {
  /** Nanoseconds on the monotonic clock (process.hrtime.bigint()). */
  readonly at: bigint;
  readonly process: ProbeProcess;
  /** Statement start or end, notification, HTTP request start or response finish. */
  readonly kind: ProbeKind;
  readonly name: string;
}

/** One client request: sent and answered, on the same clock. */
export interface ClientWindow {
  readonly sent: bigint;
  readonly answered: bigint;
}

interface Milestone {
  readonly label: string;
  readonly process: ProbeProcess;
  readonly kind: ProbeKind;
  readonly name: RegExp;
  /** The milestone that causes this one (default: the one before it in the list). */
  readonly after?: string;
  /** Absent on some paths (a cached key, a notification sent by the submission itself). */
  readonly optional?: boolean;
}

const q = (process: ProbeProcess, fn: string, what: [string, string], optional: { sent?: boolean; read?: boolean } = {}): Milestone[] => [
  { label: `${process}: ${what[0]}`, process, kind: 'qs', name: new RegExp(`^${fn}$`), ...(optional.sent ? { optional: true } : {}) },
  { label: `${process}: ${what[1]}`, process, kind: 'qe', name: new RegExp(`^${fn}$`), ...(optional.read ? { optional: true } : {}) },
];

/** The path of one step, in causal order. */
export const STEP_MILESTONES: readonly Milestone[] = [
  { label: 'api: request received', process: 'api', kind: 'rq', name: /^POST \/v1\/runs\/[^/]+\/steps$/ },
  ...q('api', 'veetbot_find_api_key', ['key lookup sent', 'key looked up'], { sent: true, read: true }),
  ...q('api', 'veetbot_submit_step', ['submission sent', 'submission committed (answer read)']),
  ...q('api', 'pg_notify', ['separate pg_notify sent', 'separate pg_notify committed'], { sent: true, read: true }),
  { label: 'worker: woken (veetbot_steps)', process: 'worker', kind: 'n', name: /^veetbot_steps$/, after: 'api: submission sent' },
  ...q('worker', 'veetbot_claim_pending', ['claim sent', 'claim returned']),
  ...q('worker', 'veetbot_open_step', ['open sent', 'opened']),
  ...q('worker', 'veetbot_insert_intent', ['intent sent', 'intent committed']),
  ...q('worker', 'veetbot_claim', ['call claim sent', 'call claimed']),
  ...q('worker', 'veetbot_mark_effect_sent', ['watermark sent', 'watermark committed']),
  ...q('worker', 'veetbot_complete', ['result sent', 'result committed']),
  // The api may answer before the worker has read its finish's result: off the client's path.
  ...q('worker', 'veetbot_finish_step', ['finish sent', 'finish committed (answer read)'], { read: true }),
  { label: 'api: woken (veetbot_step_done)', process: 'api', kind: 'n', name: /^veetbot_step_done$/, after: 'worker: finish sent' },
  ...q('api', 'veetbot_step_view', ['step view sent', 'step view read']),
  // Node's 'finish' (the response handed to the socket) may run after the client has read it.
  { label: 'api: answer sent', process: 'api', kind: 'rs', name: /^POST \/v1\/runs\/[^/]+\/steps$/, optional: true },
];

export interface HopRow {
  readonly label: string;
  /** Steps in which this milestone was found. */
  readonly found: number;
  /** p50 of (milestone − client send), ms. */
  readonly p50FromSendMs: number;
  /** Mean of (milestone − the milestone before it that was found in the same step), ms. */
  readonly meanHopMs: number;
}

export interface HopAccount {
  /** Steps whose every required milestone was found. */
  readonly steps: number;
  /** Steps left out (a required milestone missing: a retry, a poll instead of a notification). */
  readonly leftOut: number;
  /** Why steps were left out: the first required milestone not found, by label. */
  readonly missing: ReadonlyMap<string, number>;
  readonly rows: readonly HopRow[];
  readonly meanStepMs: number;
  readonly p50StepMs: number;
  /** Every statement each process ran inside the step windows, per step, by name. */
  readonly statementsPerStep: ReadonlyMap<string, number>;
}

const ms = (ns: bigint): number => Number(ns) / 1e6;

/** One process's dump (`<ns>\t<kind>\t<name>` lines); anything else is skipped. */
export function parseProbeDump(text: string, process: ProbeProcess): ProbeEvent[] {
  const events: ProbeEvent[] = [];
  for (const line of text.split('\n')) {
    const [at, kind, name] = line.split('\t');
    if (at === undefined || kind === undefined || name === undefined || !/^\d+$/.test(at)) continue;
    if (kind !== 'qs' && kind !== 'qe' && kind !== 'n' && kind !== 'rq' && kind !== 'rs') continue;
    events.push({ at: BigInt(at), process, kind, name });
  }
  return events.sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
}

export function accountHops(events: readonly ProbeEvent[], windows: readonly ClientWindow[]): HopAccount {
  const sorted = [...events].sort((a, b) => (a.at < b.at ? -1 : a.at > b.at ? 1 : 0));
  const perStep: (bigint | null)[][] = [];
  const sends: bigint[] = [];
  const totals: bigint[] = [];
  const statements = new Map<string, number>();
  let leftOut = 0;
  const missing = new Map<string, number>();
  for (const window of windows) {
    const inside = sorted.filter((e) => e.at >= window.sent && e.at <= window.answered);
    const found = new Map<string, bigint>();
    const times: (bigint | null)[] = [];
    let complete = true;
    let previous: bigint = window.sent;
    for (const milestone of STEP_MILESTONES) {
      const from = milestone.after === undefined ? previous : (found.get(milestone.after) ?? previous);
      const event = inside.find(
        (e) => e.at >= from && e.process === milestone.process && e.kind === milestone.kind && milestone.name.test(e.name),
      );
      if (event === undefined) {
        times.push(null);
        if (milestone.optional !== true && complete) {
          complete = false;
          missing.set(milestone.label, (missing.get(milestone.label) ?? 0) + 1);
        }
        continue;
      }
      found.set(milestone.label, event.at);
      times.push(event.at);
      previous = event.at;
    }
    if (!complete) {
      leftOut += 1;
      continue;
    }
    perStep.push(times);
    sends.push(window.sent);
    totals.push(window.answered - window.sent);
    for (const e of inside)
      if (e.kind === 'qs') statements.set(`${e.process}: ${e.name}`, (statements.get(`${e.process}: ${e.name}`) ?? 0) + 1);
  }
  const steps = perStep.length;
  const rows: HopRow[] = STEP_MILESTONES.map((milestone, index) => {
    const offsets: number[] = [];
    const hops: number[] = [];
    perStep.forEach((times, s) => {
      const at = times[index];
      if (at === null || at === undefined) return;
      offsets.push(ms(at - sends[s]!));
      // Time ordered: the hop runs from the latest milestone found before this one in time.
      let before: bigint = sends[s]!;
      for (const other of times) if (other !== null && other < at && other > before) before = other;
      hops.push(ms(at - before));
    });
    return { label: milestone.label, found: offsets.length, p50FromSendMs: median(offsets), meanHopMs: mean(hops) };
  });
  // The answer's last hop: from the api's answer to the client's read of it.
  const answerHops: number[] = [];
  const answerOffsets: number[] = [];
  perStep.forEach((times, s) => {
    const sent = sends[s]!;
    const latest = times.reduce<bigint>((max, t) => (t !== null && t > max ? t : max), sent);
    const total = totals[s]!;
    answerHops.push(ms(sent + total - latest));
    answerOffsets.push(ms(total));
  });
  rows.push({ label: 'client: answer read', found: steps, p50FromSendMs: median(answerOffsets), meanHopMs: mean(answerHops) });
  const perStepCounts = new Map(
    [...statements].sort(([a], [b]) => a.localeCompare(b)).map(([name, n]) => [name, steps === 0 ? 0 : n / steps]),
  );
  return {
    steps,
    leftOut,
    missing,
    rows,
    meanStepMs: mean(totals.map(ms)),
    p50StepMs: median(totals.map(ms)),
    statementsPerStep: perStepCounts,
  };
}

function median(values: number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

function mean(values: number[]): number {
  return values.length === 0 ? Number.NaN : values.reduce((a, b) => a + b, 0) / values.length;
}

/** The account as the suite prints it: fixed-width lines (the suite's output is a code block). */
export function hopLines(account: HopAccount): string[] {
  const width = Math.max(...account.rows.map((r) => r.label.length));
  const fmt = (n: number) => (Number.isNaN(n) ? '—' : n.toFixed(2)).padStart(8);
  const lines = [
    `per hop, a sequential step (${account.steps} steps${account.leftOut > 0 ? `, ${account.leftOut} left out: ${[...account.missing].map(([label, n]) => `${n} without "${label}"`).join(', ')}` : ''}; mean ${account.meanStepMs.toFixed(2)} ms, p50 ${account.p50StepMs.toFixed(2)} ms; monotonic clock, bench-only probe in the api and worker processes):`,
    `  ${'milestone'.padEnd(width)}  p50 from send   mean since the milestone before it in time (ms)`,
  ];
  // In time order: concurrent branches (the api reading its submission's answer while the worker is woken) interleave.
  const byTime = [...account.rows].sort((a, b) =>
    Number.isNaN(a.p50FromSendMs) ? 1 : Number.isNaN(b.p50FromSendMs) ? -1 : a.p50FromSendMs - b.p50FromSendMs,
  );
  for (const row of byTime) {
    const missing = row.found < account.steps ? `  (in ${row.found} of ${account.steps})` : '';
    lines.push(`  ${row.label.padEnd(width)}  ${fmt(row.p50FromSendMs)}        ${fmt(row.meanHopMs)}${missing}`);
  }
  const statements = [...account.statementsPerStep].map(([name, n]) => `${name} ${n.toFixed(2)}`).join(', ');
  lines.push(`  statements inside the step windows, per step: ${statements}`);
  return lines;
}
