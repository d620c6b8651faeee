import { describe, expect, it } from 'vitest';
import { accountHops, hopLines, parseProbeDump, type ProbeEvent } from '../src/hop-account';

/** A step's events at the given milliseconds after `base`, in the probe's dump format. */
const ms = (base: bigint, at: number) => base + BigInt(Math.round(at * 1e6));

function dump(base: bigint, lines: [number, string, string][]): string {
  return lines.map(([at, kind, name]) => `${ms(base, at)}\t${kind}\t${name}`).join('\n');
}

const STEP_PATH = 'POST /v1/runs/0b0b0b0b-0000-4000-8000-000000000001/steps';

/** One step as the processes record it: api, then worker, then api again. */
function stepEvents(base: bigint, options: { separateNotify?: boolean; workerFinishLate?: boolean } = {}): ProbeEvent[] {
  const notify = options.separateNotify ? 1 : 0;
  const api = dump(base, [
    [1, 'rq', STEP_PATH],
    [1.5, 'qs', 'veetbot_find_api_key'],
    [2, 'qe', 'veetbot_find_api_key'],
    [2.2, 'qs', 'veetbot_submit_step'],
    [3, 'qe', 'veetbot_submit_step'],
    ...(options.separateNotify
      ? ([
          [3.1, 'qs', 'pg_notify'],
          [4, 'qe', 'pg_notify'],
        ] as [number, string, string][])
      : []),
    [12 + notify, 'n', 'veetbot_step_done'],
    [12.5 + notify, 'qs', 'veetbot_step_view'],
    [13.5 + notify, 'qe', 'veetbot_step_view'],
    [13.8 + notify, 'rs', STEP_PATH],
  ]);
  const worker = dump(base, [
    [3.2 + notify, 'n', 'veetbot_steps'],
    [3.3 + notify, 'qs', 'veetbot_claim_pending'],
    [4 + notify, 'qe', 'veetbot_claim_pending'],
    ...(
      [
        ['veetbot_open_step', 4.1],
        ['veetbot_insert_intent', 5.5],
        ['veetbot_claim', 7],
        ['veetbot_mark_effect_sent', 8.5],
        ['veetbot_complete', 10],
      ] as [string, number][]
    ).flatMap(([name, at]): [number, string, string][] => [
      [at + notify, 'qs', name],
      [at + 1 + notify, 'qe', name],
    ]),
    [11.5 + notify, 'qs', 'veetbot_finish_step'],
    [options.workerFinishLate ? 20 : 11.9 + notify, 'qe', 'veetbot_finish_step'],
    // The worker's own copy of the done notification: not the api's milestone.
    [11.95 + notify, 'n', 'veetbot_step_done'],
  ]);
  return [...parseProbeDump(api, 'api'), ...parseProbeDump(worker, 'worker')];
}

describe('the per-hop account of a sequential HTTP step (docs/adr/0076)', () => {
  it('finds every milestone in causal order and its hops add up to the step', () => {
    const base = 1_000_000_000n;
    const events = [...stepEvents(base), ...stepEvents(base + 100_000_000n)];
    const account = accountHops(events, [
      { sent: base, answered: ms(base, 14.5) },
      { sent: base + 100_000_000n, answered: ms(base + 100_000_000n, 14.5) },
    ]);
    expect(account.steps).toBe(2);
    expect(account.leftOut).toBe(0);
    const row = (label: string) => account.rows.find((r) => r.label === label)!;
    expect(row('api: request received').p50FromSendMs).toBeCloseTo(1, 6);
    expect(row('worker: woken (veetbot_steps)').p50FromSendMs).toBeCloseTo(3.2, 6);
    // The api's woken milestone is its own notification, not the worker's copy.
    expect(row('api: woken (veetbot_step_done)').p50FromSendMs).toBeCloseTo(12, 6);
    expect(row('worker: claim returned').meanHopMs).toBeCloseTo(0.7, 6);
    expect(row('client: answer read').meanHopMs).toBeCloseTo(0.7, 6);
    // No separate pg_notify on this path.
    expect(row('api: separate pg_notify sent').found).toBe(0);
    const sum = account.rows.reduce((total, r) => total + (Number.isNaN(r.meanHopMs) ? 0 : r.meanHopMs), 0);
    expect(sum).toBeCloseTo(account.meanStepMs, 6);
    expect(account.statementsPerStep.get('worker: veetbot_claim_pending')).toBe(1);
    expect(account.statementsPerStep.get('api: veetbot_submit_step')).toBe(1);
  });

  it("shows the api's separate notification where there is one, and a finish read after the answer as off the path", () => {
    const base = 5_000_000_000n;
    const account = accountHops(stepEvents(base, { separateNotify: true, workerFinishLate: true }), [
      { sent: base, answered: ms(base, 15.5) },
    ]);
    expect(account.steps).toBe(1);
    const row = (label: string) => account.rows.find((r) => r.label === label)!;
    expect(row('api: separate pg_notify committed').p50FromSendMs).toBeCloseTo(4, 6);
    expect(row('worker: finish committed (answer read)').found).toBe(0);
    expect(account.statementsPerStep.get('api: pg_notify')).toBe(1);
  });

  it('leaves out a step whose required milestone is missing, and says which', () => {
    const base = 9_000_000_000n;
    const events = stepEvents(base).filter((e) => !(e.process === 'worker' && e.kind === 'n'));
    const account = accountHops(events, [{ sent: base, answered: ms(base, 14.5) }]);
    expect(account.steps).toBe(0);
    expect(account.leftOut).toBe(1);
    expect([...account.missing]).toEqual([['worker: woken (veetbot_steps)', 1]]);
    expect(hopLines(account)[0]).toContain('1 without "worker: woken (veetbot_steps)"');
  });

  it('skips lines that are not probe records', () => {
    const events = parseProbeDump('garbage\n12\tqs\tveetbot_claim\nx\tqs\ty\n13\tzz\tname\n\n', 'worker');
    expect(events).toEqual([{ at: 12n, process: 'worker', kind: 'qs', name: 'veetbot_claim' }]);
  });
});
