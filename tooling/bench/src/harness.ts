import { performance } from 'node:perf_hooks';

export interface Measurement {
  readonly name: string;
  readonly opsPerSecond: number;
  readonly nsPerOp: number;
}

/**
 * Run `fn` in timed batches and return the median rate. Baseline and subject are measured in
 * alternating rounds by `compare`, so drift on a shared 2-core machine hits both alike.
 */
async function rate(fn: () => unknown | Promise<unknown>, batch: number): Promise<number> {
  const start = performance.now();
  for (let i = 0; i < batch; i++) {
    const r = fn();
    if (r instanceof Promise) await r;
  }
  const ms = performance.now() - start;
  return (batch / ms) * 1000;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

export async function compare(
  baseline: { name: string; fn: () => unknown | Promise<unknown> },
  subject: { name: string; fn: () => unknown | Promise<unknown> },
  options: { batch: number; rounds: number; warmup: number },
): Promise<{ baseline: Measurement; subject: Measurement; ratio: number }> {
  for (let i = 0; i < options.warmup; i++) {
    await rate(baseline.fn, options.batch);
    await rate(subject.fn, options.batch);
  }
  const b: number[] = [];
  const s: number[] = [];
  for (let i = 0; i < options.rounds; i++) {
    b.push(await rate(baseline.fn, options.batch));
    s.push(await rate(subject.fn, options.batch));
  }
  const bm = median(b);
  const sm = median(s);
  const m = (name: string, ops: number): Measurement => ({ name, opsPerSecond: ops, nsPerOp: 1e9 / ops });
  return { baseline: m(baseline.name, bm), subject: m(subject.name, sm), ratio: bm / sm };
}

export function fmt(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
