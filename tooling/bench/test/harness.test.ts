import { describe, expect, it } from 'vitest';
import { compare } from '../src/harness';

describe('compare', () => {
  it('runs every operation of every round, warm-up included, for both sides', async () => {
    let baseline = 0;
    let subject = 0;
    await compare(
      {
        name: 'b',
        fn: () => {
          baseline += 1;
        },
      },
      {
        name: 's',
        fn: () => {
          subject += 1;
        },
      },
      { batch: 7, rounds: 3, warmup: 2 },
    );
    expect(baseline).toBe(7 * 5);
    expect(subject).toBe(7 * 5);
  });

  it('with concurrency, keeps exactly that many callers in flight and hands each its own index', async () => {
    let inFlight = 0;
    let peak = 0;
    const workers = new Set<number>();
    let done = 0;
    const op = async (worker: number) => {
      workers.add(worker);
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      await new Promise((resolve) => setTimeout(resolve, 1));
      inFlight -= 1;
      done += 1;
    };
    await compare({ name: 'b', fn: op }, { name: 's', fn: op }, { batch: 40, rounds: 1, warmup: 0, concurrency: 8 });
    expect(done).toBe(80);
    expect(peak).toBe(8);
    expect([...workers].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it("reports the subject's cost in units of the baseline's: a subject four times as slow is a ratio well above 1", async () => {
    const wait = (ms: number) => () => new Promise((resolve) => setTimeout(resolve, ms));
    const r = await compare({ name: 'b', fn: wait(5) }, { name: 's', fn: wait(20) }, { batch: 8, rounds: 3, warmup: 0 });
    // Timer jitter on a loaded machine adds to both sides, so the bounds are loose.
    expect(r.ratio).toBeGreaterThan(1.5);
    expect(r.ratio).toBeLessThan(6);
    expect(r.subject.opsPerSecond).toBeLessThan(r.baseline.opsPerSecond);
  });
});
