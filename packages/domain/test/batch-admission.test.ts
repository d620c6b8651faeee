import { describe, expect, it } from 'vitest';
import { ConfigurationError, DEFAULT_BATCH_CONCURRENCY, ToolSpec, admitBatch, runWithConcurrencyCap } from '../src/index';
import { findSharedWritePath, normalizeWorkspacePath } from '../src/batch-admission';
import type { BatchCall, ToolSpecInput } from '../src/index';

// § Parallel calls, and what a step actually is — the admission check.

/** A real, parsed ToolSpec: read-only and parallel-safe unless overridden. */
function spec(overrides: Partial<ToolSpecInput> = {}): ToolSpec {
  return ToolSpec.parse({
    name: 'web.search',
    version: '1.0.0',
    description: 'Search the web.',
    input_schema: { type: 'object' },
    output_schema: null,
    side_effect: 'network_read',
    risk: 'low',
    idempotency: 'read_only',
    required_scopes: [],
    timeout_seconds: 30,
    maximum_output_bytes: 65_536,
    allow_parallel: true,
    output_trust: 'external_untrusted',
    ...overrides,
  });
}

const read = (overrides: Partial<ToolSpecInput> = {}, args: Record<string, unknown> = {}): BatchCall => ({
  spec: spec(overrides),
  arguments: args,
});
const ROOMY = { remainingToolCalls: 100, remainingSeconds: 3600 };

describe('admitBatch', () => {
  it('runs a batch of read-only, parallel, READ_ONLY calls that fits the budget in parallel', () => {
    const batch = [
      read(),
      read({ name: 'workspace.read_file', side_effect: 'workspace_read' }, { path: 'a.txt' }),
      read({ side_effect: 'none' }),
      read({ side_effect: 'external_read' }),
    ];
    expect(admitBatch(batch, ROOMY)).toEqual({ mode: 'parallel' });
  });

  it('len(batch) > 1: one call (or none) is sequential', () => {
    expect(admitBatch([read()], ROOMY)).toEqual({ mode: 'sequential', reason: 'single_call', reasons: ['single_call'] });
    expect(admitBatch([], ROOMY)).toMatchObject({ mode: 'sequential', reason: 'single_call' });
  });

  it.each(['workspace_write', 'external_write'] as const)(
    'every side_effect read-only: one %s makes the whole batch sequential',
    (side_effect) => {
      const result = admitBatch([read(), read(), read({ side_effect, idempotency: 'read_only' }, { path: 'out.txt' })], ROOMY);
      expect(result).toMatchObject({ mode: 'sequential', reason: 'not_read_only' });
    },
  );

  it('every allow_parallel', () => {
    expect(admitBatch([read(), read({ allow_parallel: false })], ROOMY)).toEqual({
      mode: 'sequential',
      reason: 'not_allow_parallel',
      reasons: ['not_allow_parallel'],
    });
  });

  it.each(['idempotent', 'conditionally_idempotent', 'non_idempotent'] as const)(
    'every idempotency READ_ONLY: %s is sequential',
    (idempotency) => {
      expect(admitBatch([read(), read({ idempotency })], ROOMY)).toEqual({
        mode: 'sequential',
        reason: 'not_read_only_idempotency',
        reasons: ['not_read_only_idempotency'],
      });
    },
  );

  it('fits the remaining tool budget: a batch larger than the calls left is sequential', () => {
    const batch = [read(), read(), read()];
    expect(admitBatch(batch, { remainingToolCalls: 3, remainingSeconds: 3600 })).toEqual({ mode: 'parallel' });
    expect(admitBatch(batch, { remainingToolCalls: 2, remainingSeconds: 3600 })).toEqual({
      mode: 'sequential',
      reason: 'over_budget',
      reasons: ['over_budget'],
    });
  });

  it('fits the remaining time: the longest timeout must fit before the deadline', () => {
    const batch = [read({ timeout_seconds: 10 }), read({ timeout_seconds: 45 })];
    expect(admitBatch(batch, { remainingToolCalls: 10, remainingSeconds: 45 })).toEqual({ mode: 'parallel' });
    expect(admitBatch(batch, { remainingToolCalls: 10, remainingSeconds: 44 })).toMatchObject({
      mode: 'sequential',
      reason: 'over_budget',
    });
    expect(admitBatch(batch, { remainingToolCalls: Infinity, remainingSeconds: Infinity })).toEqual({ mode: 'parallel' });
  });

  it('a call still wrapped in tool.call could not be unwrapped: sequential', () => {
    const wrapped = read({ name: 'tool.call', kind: 'control', side_effect: 'none' }, { name: 'web.search', arguments: {} });
    expect(admitBatch([read(), wrapped], ROOMY)).toMatchObject({ mode: 'sequential', reason: 'unresolved_tool_call' });
  });

  it('decides on the unwrapped tools: a tool.call that named a write is a write', () => {
    // The pipeline unwrapped tool.call {name: "workspace.write_file"} into the tool it runs.
    const unwrapped = read(
      { name: 'workspace.write_file', side_effect: 'workspace_write', idempotency: 'idempotent', allow_parallel: false },
      { path: 'x' },
    );
    expect(admitBatch([read(), unwrapped], ROOMY)).toMatchObject({ mode: 'sequential', reason: 'not_read_only' });
  });

  it('reports the first failed condition and every other one', () => {
    const write = read(
      { side_effect: 'workspace_write', idempotency: 'non_idempotent', allow_parallel: false, timeout_seconds: 999 },
      { path: 'a/b' },
    );
    const other = read({ side_effect: 'workspace_write' }, { path: 'a/b' });
    expect(admitBatch([write, other], { remainingToolCalls: 1, remainingSeconds: 10 })).toEqual({
      mode: 'sequential',
      reason: 'not_read_only',
      reasons: ['not_read_only', 'not_allow_parallel', 'not_read_only_idempotency', 'shared_write_path', 'over_budget'],
    });
  });
});

describe('no two calls share a workspace write path', () => {
  const write = (path: unknown): BatchCall =>
    read({ name: 'workspace.write_file', side_effect: 'workspace_write' }, path === undefined ? {} : { path });

  it('finds two writes to the same path, after normalization', () => {
    expect(findSharedWritePath([write('notes/a.md'), read(), write('./notes//a.md')])).toEqual({ first: 0, second: 2, path: 'notes/a.md' });
    expect(findSharedWritePath([write('notes/x/../a.md'), write('notes/a.md')])).toMatchObject({ path: 'notes/a.md' });
  });

  it('treats a folder and a file inside it as shared, distinct siblings as not', () => {
    expect(findSharedWritePath([write('out'), write('out/report.txt')])).toEqual({ first: 0, second: 1, path: 'out' });
    expect(findSharedWritePath([write('out/report.txt'), write('out')])).toEqual({ first: 0, second: 1, path: 'out' });
    expect(findSharedWritePath([write('out/a.txt'), write('out/b.txt')])).toBeNull();
    expect(findSharedWritePath([write('out'), write('output.txt')])).toBeNull();
  });

  it('a write without a path could write anywhere, so it conflicts with any other write', () => {
    expect(findSharedWritePath([write(undefined), write('a.txt')])).toEqual({ first: 0, second: 1, path: null });
    expect(findSharedWritePath([write(42), write('a.txt')])).toMatchObject({ path: null });
    // One write alone shares nothing.
    expect(findSharedWritePath([write(undefined), read()])).toBeNull();
  });

  it('ignores the path argument of tools that do not write the workspace', () => {
    const reader = read({ name: 'workspace.read_file', side_effect: 'workspace_read' }, { path: 'a.txt' });
    expect(findSharedWritePath([reader, reader, write('a.txt')])).toBeNull();
  });

  it('normalizes paths segment by segment', () => {
    expect(['a/b', '/a/b/', './a/./b', 'a//b', 'a/c/../b', '../a/b'].map(normalizeWorkspacePath)).toEqual(Array(6).fill('a/b'));
    expect(normalizeWorkspacePath('e\u0301.txt')).toBe('é.txt');
  });
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('runWithConcurrencyCap', () => {
  function tracked(count: number, delay: (i: number) => number, fail: (i: number) => boolean = () => false) {
    let inFlight = 0;
    let maxInFlight = 0;
    const started: number[] = [];
    const tasks = Array.from({ length: count }, (_, i) => async () => {
      started.push(i);
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      await sleep(delay(i));
      inFlight -= 1;
      if (fail(i)) throw new Error(`task ${i} failed`);
      return i * 10;
    });
    return { tasks, stats: () => ({ maxInFlight, started }) };
  }

  it('defaults to 8 in flight, queues the rest, and keeps result order', async () => {
    expect(DEFAULT_BATCH_CONCURRENCY).toBe(8);
    const { tasks, stats } = tracked(20, (i) => 5 + ((i * 7) % 11));
    const results = await runWithConcurrencyCap(tasks);
    expect(stats().maxInFlight).toBe(8);
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => ({ status: 'fulfilled', value: i * 10 })));
    expect(stats().started).toHaveLength(20);
  });

  it('honours a smaller cap', async () => {
    const { tasks, stats } = tracked(7, () => 5);
    await runWithConcurrencyCap(tasks, 3);
    expect(stats().maxInFlight).toBe(3);
    const one = tracked(4, () => 2);
    await runWithConcurrencyCap(one.tasks, 1);
    expect(one.stats().maxInFlight).toBe(1);
    expect(one.stats().started).toEqual([0, 1, 2, 3]);
  });

  it('a rejection does not cancel its siblings, queued or in flight', async () => {
    const { tasks, stats } = tracked(
      6,
      (i) => (i === 0 ? 1 : 10),
      (i) => i === 0 || i === 4,
    );
    const sync = () => {
      throw new Error('thrown synchronously');
    };
    const results = await runWithConcurrencyCap([...tasks, sync], 2);
    expect(stats().started).toHaveLength(6);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect(results[0]).toMatchObject({ status: 'rejected', reason: new Error('task 0 failed') });
    expect(results[5]).toEqual({ status: 'fulfilled', value: 50 });
    expect(results[6]).toMatchObject({ reason: new Error('thrown synchronously') });
  });

  it('handles an empty batch and refuses a cap below one', async () => {
    expect(await runWithConcurrencyCap([])).toEqual([]);
    await expect(runWithConcurrencyCap([async () => 1], 0)).rejects.toBeInstanceOf(ConfigurationError);
    await expect(runWithConcurrencyCap([async () => 1], 1.5)).rejects.toBeInstanceOf(ConfigurationError);
  });
});
