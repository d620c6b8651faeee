import { performance } from 'node:perf_hooks';

export interface Measurement {
  readonly name: string;
  readonly opsPerSecond: number;
  readonly nsPerOp: number;
}

/** One operation. `worker` is the index of the concurrent caller running it (0 when sequential). */
export type Operation = (worker: number) => unknown | Promise<unknown>;

export interface CompareOptions {
  /** Operations per timed round (split across the callers when concurrent). */
  readonly batch: number;
  readonly rounds: number;
  readonly warmup: number;
  /** Concurrent callers, each awaiting its previous operation before the next. Default 1. */
  readonly concurrency?: number;
}

/**
 * Run `batch` operations and return the rate. With `concurrency` > 1, that many callers draw
 * from one shared count, so the round ends when the last operation does (throughput, not the
 * fastest caller's rate).
 */
async function rate(fn: Operation, batch: number, concurrency: number): Promise<number> {
  const start = performance.now();
  if (concurrency <= 1) {
    for (let i = 0; i < batch; i++) {
      const r = fn(0);
      if (r instanceof Promise) await r;
    }
  } else {
    let remaining = batch;
    const caller = async (worker: number) => {
      while (remaining > 0) {
        remaining -= 1;
        await fn(worker);
      }
    };
    await Promise.all(Array.from({ length: concurrency }, (_, worker) => caller(worker)));
  }
  const ms = performance.now() - start;
  return (batch / ms) * 1000;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/**
 * Run `fn` in timed batches and return the median rate. Baseline and subject are measured in
 * alternating rounds, so drift on a shared 2-core machine hits both alike. `ratio` is
 * baseline ops / subject ops: the subject's cost per operation in units of the baseline's.
 */
export async function compare(
  baseline: { name: string; fn: Operation },
  subject: { name: string; fn: Operation },
  options: CompareOptions,
): Promise<{ baseline: Measurement; subject: Measurement; ratio: number }> {
  const concurrency = options.concurrency ?? 1;
  for (let i = 0; i < options.warmup; i++) {
    await rate(baseline.fn, options.batch, concurrency);
    await rate(subject.fn, options.batch, concurrency);
  }
  const b: number[] = [];
  const s: number[] = [];
  for (let i = 0; i < options.rounds; i++) {
    // Alternate which goes first, so neither always inherits the other's leftovers
    // (autovacuum, checkpoints, a neighbour's burst).
    if (i % 2 === 0) {
      b.push(await rate(baseline.fn, options.batch, concurrency));
      s.push(await rate(subject.fn, options.batch, concurrency));
    } else {
      s.push(await rate(subject.fn, options.batch, concurrency));
      b.push(await rate(baseline.fn, options.batch, concurrency));
    }
  }
  const bm = median(b);
  const sm = median(s);
  const m = (name: string, ops: number): Measurement => ({ name, opsPerSecond: ops, nsPerOp: 1e9 / ops });
  return { baseline: m(baseline.name, bm), subject: m(subject.name, sm), ratio: bm / sm };
}

export function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
