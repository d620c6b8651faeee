import { describe, expect, it } from 'vitest';
import type { BenchContext } from '../src/bench-context';
import { BenchUsageError, parseBenchArgs, runBench, selectSuites, type Suite } from '../src/bench-run';
import type { BenchRecord } from '../src/benchmarks-doc';
import { machineFacts } from '../src/benchmarks-doc';
import { GOALS, targetLine, targetsIn, unmeasuredLine } from '../src/targets';

const VERDICT = /^target [a-z0-9-]+: .+ \(goal [≤≥<] .+\): (met|NOT met)$/;

describe('the verdict line', () => {
  it('is `target <name>: <measured> (goal <goal>): met | NOT met`, in the direction of the goal', () => {
    expect(targetLine('step-vs-call', 1.5)).toBe('target step-vs-call: 1.50× (goal ≤ 1.50×): met');
    expect(targetLine('step-vs-call', 1.51)).toBe('target step-vs-call: 1.51× (goal ≤ 1.50×): NOT met');
    expect(targetLine('step-vs-dbos-16', 0.93)).toBe('target step-vs-dbos-16: 0.93× (goal ≥ 1.00×): NOT met');
    expect(targetLine('http-vs-inprocess-16', 71.2)).toBe('target http-vs-inprocess-16: 71% (goal ≥ 70%): met');
    expect(targetLine('mcp-own-share', 0.512)).toBe('target mcp-own-share: 0.51 ms (goal ≤ 0.50 ms): NOT met');
    expect(targetLine('worker-rss-10k', 149.99)).toBe('target worker-rss-10k: 150.0 MB (goal < 150.0 MB): met');
    expect(targetLine('worker-rss-10k', 150)).toBe('target worker-rss-10k: 150.0 MB (goal < 150.0 MB): NOT met');
    expect(targetLine('steps-1-7-calls-per-s', 61_234.4)).toBe('target steps-1-7-calls-per-s: 61,234 calls/s (goal ≥ 50,000 calls/s): met');
    expect(targetLine('session-open-500', 0.41)).toBe('target session-open-500: 0.41 s (goal < 1.00 s): met');
    // A figure that could not be computed is never a pass.
    expect(targetLine('late-vs-early-step', Number.NaN)).toMatch(/: NOT met$/);
  });

  it("names every goal of issue 14 once, and each line parses back to its goal's name", () => {
    expect(GOALS.map((g) => g.name)).toEqual([
      'step-vs-call',
      'step-vs-dbos-16',
      'http-vs-inprocess-16',
      'http-p99-16',
      'call-vs-dbos-seq',
      'call-vs-dbos-8',
      'late-vs-early-step',
      'mcp-own-share',
      'worker-rss-10k',
      'steps-1-7-vs-floor',
      'steps-1-7-calls-per-s',
      'session-open-500',
      'gateway-vs-steps-route',
      'scale-2-vs-1-workers',
      'scale-4-vs-1-workers',
      'noisy-neighbour-p99',
      'http-step-vs-restate-seq',
      'http-vs-restate-16',
      'pg-cpu-step-vs-dbos',
      'pg-cpu-http-vs-inprocess',
    ]);
    for (const goal of GOALS) {
      const line = targetLine(goal.name, goal.value);
      expect(line).toMatch(VERDICT);
      expect([...targetsIn([line])]).toEqual([goal.name]);
      expect(unmeasuredLine(goal.name, 'the benchmark failed')).toMatch(VERDICT);
      expect(unmeasuredLine(goal.name, 'the benchmark failed')).toMatch(/: NOT met$/);
    }
  });
});

const context: BenchContext = { postgres: { reachable: false, server: 'postgres://x', reason: 'test' } };

function fakeSuites(calls: string[]): Suite[] {
  return [
    {
      key: 'one',
      title: 'suite one',
      goals: ['step-vs-call', 'step-vs-dbos-16'],
      run: async () => {
        calls.push('one');
        return ['context line', targetLine('step-vs-call', 1.2)];
      },
    },
    {
      key: 'two',
      title: 'suite two',
      goals: ['mcp-own-share'],
      run: async () => {
        calls.push('two');
        throw new Error('the server went away');
      },
    },
  ];
}

async function run(argv: string[]) {
  const calls: string[] = [];
  const written: BenchRecord[] = [];
  const out: string[] = [];
  const result = await runBench({
    argv,
    suites: fakeSuites(calls),
    context,
    header: ['header'],
    record: { startedAt: new Date(), machine: machineFacts(), postgres: 'none', loadAtStart: '0.00, 0.00, 0.00' },
    command: 'pnpm bench',
    loadAverage: () => '0.00, 0.00, 0.00',
    writeDoc: async (record) => {
      written.push(record);
      return '/docs/benchmarks.md';
    },
    log: (line) => out.push(...line.split('\n')),
  });
  return { calls, written, out, result };
}

describe('pnpm bench', () => {
  it('leaves docs/benchmarks.md alone without --record', async () => {
    const { written, result, out } = await run([]);
    expect(written).toEqual([]);
    expect(result.written).toBeNull();
    expect(out.at(-1)).toContain('docs/benchmarks.md left alone');
  });

  it('writes docs/benchmarks.md from the run with --record, with the lines printed', async () => {
    const { written, result, out } = await run(['--record']);
    expect(result.written).toBe('/docs/benchmarks.md');
    expect(written).toHaveLength(1);
    expect(written[0]!.command).toBe('pnpm bench --record');
    expect(written[0]!.suites.map((s) => s.name)).toEqual(['suite one', 'suite two']);
    expect(written[0]!.suites[0]!.lines).toEqual(
      out.slice(out.indexOf('## suite one') + 1, out.indexOf('## suite one') + 1 + written[0]!.suites[0]!.lines.length),
    );
  });

  it("prints every goal of a suite that ran exactly once, a failed or silent suite's as not measured", async () => {
    const { out, result } = await run([]);
    const verdicts = out.filter((l) => l.startsWith('target '));
    expect(verdicts).toEqual([
      'target step-vs-call: 1.20× (goal ≤ 1.50×): met',
      'target step-vs-dbos-16: not measured, the benchmark printed no figure for it (goal ≥ 1.00×): NOT met',
      'target mcp-own-share: not measured, the benchmark failed (goal ≤ 0.50 ms): NOT met',
    ]);
    expect(out).toContain('FAILED: Error: the server went away');
    expect(result.ok).toBe(false);
  });

  it('runs only the suites named, by key or by goal, and refuses names it does not know', async () => {
    expect((await run(['mcp-own-share'])).calls).toEqual(['two']);
    expect((await run(['one', '--record'])).written[0]!.command).toBe('pnpm bench one --record');
    expect(selectSuites(fakeSuites([]), []).map((s) => s.key)).toEqual(['one', 'two']);
    expect(() => parseBenchArgs(['step-vs-cal'], fakeSuites([]))).toThrow(BenchUsageError);
    expect(() => parseBenchArgs(['--recrod'], fakeSuites([]))).toThrow(BenchUsageError);
    expect(parseBenchArgs(['--', 'two', '--record'], fakeSuites([]))).toEqual({ record: true, filters: ['two'] });
  });
});
