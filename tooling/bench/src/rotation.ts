import { performance } from 'node:perf_hooks';

/**
 * Several operations measured in one run, in rounds whose order rotates (harness.ts's
 * `compare` for more than two): each round times a batch of every operation, the first of a
 * round is a different one each time, and each operation's median round is its figure. Drift
 * on a shared machine then hits all of them alike.
 */
export interface RotationOptions {
  readonly batch: number;
  readonly rounds: number;
  readonly warmup: number;
}

export async function rotate<K extends string>(
  operations: Record<K, () => Promise<unknown>>,
  options: RotationOptions,
): Promise<Record<K, { msPerOp: number; opsPerSecond: number; rounds: number[] }>> {
  const names = Object.keys(operations) as K[];
  const timings = new Map<K, number[]>(names.map((n) => [n, []]));
  const batch = async (name: K): Promise<number> => {
    const fn = operations[name];
    const start = performance.now();
    for (let i = 0; i < options.batch; i++) await fn();
    return (performance.now() - start) / options.batch;
  };
  for (let w = 0; w < options.warmup; w++) for (const name of names) await batch(name);
  for (let r = 0; r < options.rounds; r++) {
    for (let i = 0; i < names.length; i++) {
      const name = names[(r + i) % names.length]!;
      timings.get(name)!.push(await batch(name));
    }
  }
  const out = {} as Record<K, { msPerOp: number; opsPerSecond: number; rounds: number[] }>;
  for (const name of names) {
    const sorted = [...timings.get(name)!].sort((a, b) => a - b);
    const ms = sorted[Math.floor(sorted.length / 2)]!;
    // `rounds`: ms per operation in each round, in round order (a difference of operations is
    // best taken round by round: the rounds are where they ran side by side).
    out[name] = { msPerOp: ms, opsPerSecond: 1000 / ms, rounds: timings.get(name)! };
  }
  return out;
}
