import { ToolResult, isKnownReasonCode } from '@veetbot/domain';
import { describe, expect, it } from 'vitest';
import { createMathEvaluateTool } from '../src/math/math-evaluate';
import { createFakeContext } from './fake-context';

const tool = createMathEvaluateTool();
const run = async (expression: string) => ToolResult.parse(await tool.execute({ expression }, createFakeContext().context));

describe('math.evaluate', () => {
  it('returns the number as text and as structured { value }', async () => {
    const result = await run('2 * (3 + 4) ^ 2');
    expect(result.ok).toBe(true);
    expect(result.structured).toEqual({ value: 98 });
    expect(result.content).toEqual([{ type: 'text', text: '98' }]);
    expect(result.failure).toBeNull();
  });

  it.each([
    ['1 +', 'tool.invalid_arguments.expression_syntax'],
    ['nope(1)', 'tool.invalid_arguments.expression_unknown_name'],
    ['max()', 'tool.invalid_arguments.expression_arity'],
    ['1 / 0', 'tool.invalid_arguments.division_by_zero'],
    ['sqrt(-4)', 'tool.invalid_arguments.non_finite'],
    [`${'('.repeat(300)}1${')'.repeat(300)}`, 'tool.invalid_arguments.expression_too_deep'],
    [`${'1+'.repeat(600)}1`, 'tool.invalid_arguments.expression_too_long'],
  ])('%j fails with %s, no content, not retryable', async (expression, code) => {
    const result = await run(expression);
    expect(result.ok).toBe(false);
    expect(result.content).toEqual([]);
    expect(result.failure).toMatchObject({ kind: 'invalid_arguments', reason_code: code, retryable: false, external_text: null });
    expect(result.failure?.detail).toMatch(/position \d+/);
    expect(isKnownReasonCode(code)).toBe(true);
  });

  it('never calls the effect watermark: it has no effect', async () => {
    const fake = createFakeContext();
    await tool.execute({ expression: '1 + 1' }, fake.context);
    expect(fake.markEffectSentCalls()).toBe(0);
  });
});
