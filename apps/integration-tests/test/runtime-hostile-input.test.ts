import { createHash } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { JSON_MAX_DEPTH } from '@veetbot/domain';
import { drivers } from '../src';
import { useRuntimeScene, userCall } from './runtime-harness';

const deep = (levels: number): unknown => {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { d: value };
  return value;
};

/**
 * ADR 0019 on the runtime's own path (Runtime.submitStep, in process, no api): the batch is
 * stored before any call runs, so a call the store could not hold, or a walk could not recurse
 * into, is refused as `runtime.step_invalid` naming the field — the error the api answers as
 * 400 request.invalid — and nothing is stored: no step, no invocation, no event. Before, each
 * of these escaped as a StoreError (SQLSTATE 22P05 / 22P02) or a stack overflow.
 */
describe.each(drivers())('hostile calls through Runtime.submitStep on %s', (driver) => {
  const scene = useRuntimeScene(driver);

  it.each([
    ['a NUL in an argument value', userCall('c2', 'math.evaluate', { expression: '1\u0000' }), 'calls.1.arguments.expression', 'NUL'],
    ['a NUL in an argument key', userCall('c2', 'math.evaluate', { expression: '1', 'k\u0000': 1 }), 'calls.1.arguments', 'NUL'],
    [
      'a lone surrogate in an argument',
      userCall('c2', 'math.evaluate', { expression: '\uD800' }),
      'calls.1.arguments.expression',
      'not valid Unicode',
    ],
    ['a NUL in the tool name', userCall('c2', 'math.evaluate\u0000', { expression: '1' }), 'calls.1.tool_name', 'NUL'],
    ['a NUL in the call id', userCall('c\u0000', 'math.evaluate', { expression: '1' }), 'calls.1.call_id', 'NUL'],
    [
      'arguments nested 5,000 deep',
      userCall('c2', 'math.evaluate', { expression: '1', x: deep(5_000) }),
      'calls.1.arguments.x.d.d',
      `deeper than ${JSON_MAX_DEPTH + 3}`,
    ],
    ['an argument -0', userCall('c2', 'math.evaluate', { expression: '1', n: -0 }), 'calls.1.arguments.n', '-0'],
    [
      'a __proto__ argument',
      userCall('c2', 'math.evaluate', JSON.parse('{"__proto__":{"expression":"1"}}') as unknown),
      'calls.1.arguments',
      '"__proto__"',
    ],
  ])('%s: runtime.step_invalid at the field, nothing stored', async (_name, call, at, says) => {
    const s = scene();
    const { runId } = await s.openRun();
    // A valid call first: the refusal is the whole step's, before anything is stored or run.
    const submission = s.step(runId, 1, [userCall('c1', 'math.evaluate', { expression: '1' }), call]);
    const error = await s.runtime.submitStep(submission).then(
      () => null,
      (e: unknown) => e as { code?: string; message?: string },
    );
    expect(error?.code).toBe('runtime.step_invalid');
    expect(error?.message).toContain(`invalid at ${at}`);
    expect(error?.message).toContain(says);
    expect(await s.stores.steps.get(s.tenantId, runId, 1)).toBeNull();
    expect(await s.stores.invocations.listForRun(s.tenantId, runId)).toEqual([]);
    expect(await s.stores.events.listAfter(s.tenantId, runId, 0, 100)).toEqual([]);
  });

  it('arguments right at the limit run (the line is where the api and step 4 draw it)', async () => {
    const s = scene();
    const { runId } = await s.openRun();
    const outcome = await s.runtime.submitStep(
      s.step(runId, 1, [
        userCall('c1', 'demo.rt_read', { n: 1 }),
        userCall('c2', 'math.evaluate', { expression: '1', x: deep(JSON_MAX_DEPTH - 1) }),
      ]),
    );
    expect(outcome.items.map((i) => i.outcome.reason_code)).toEqual(['tool.ok', 'tool.arguments_invalid']); // math.evaluate has no `x`: its schema, not a crash
  });

  it('a result no store can hold (a workspace file with a NUL, read as text) is FAILED tool.output_invalid, not a RUNNING row', async () => {
    const s = scene();
    const { runId } = await s.openRun();
    const folder = path.join(s.folders.workspaces, createHash('sha256').update(s.tenantId, 'utf8').digest('hex').slice(0, 32), runId);
    await mkdir(folder, { recursive: true });
    await writeFile(path.join(folder, 'nul.txt'), Buffer.from('before\u0000after', 'utf8'));
    // Before ADR 0019 this threw StoreError (SQLSTATE 22P05) at step 13 and left the row RUNNING.
    const outcome = await s.runtime.submitStep(s.step(runId, 1, [userCall('c1', 'workspace.read_text', { path: 'nul.txt' })]));
    expect(outcome.items.map((i) => [i.outcome.status, i.outcome.reason_code])).toEqual([['failed', 'tool.output_invalid']]);
    const rows = await s.stores.invocations.listForRun(s.tenantId, runId);
    expect(rows.map((r) => [r.status, r.reasonCode])).toEqual([['failed', 'tool.output_invalid']]);
    expect(JSON.stringify(rows[0]?.error)).toContain('json.nul_character');
  });
});
