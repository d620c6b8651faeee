import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_DEPTH, ExpressionError, evaluateExpression, safeEvaluateExpression } from '../src/math/expression-parser';

/** The error a source must produce: its code and position. */
function errorOf(source: string): { code: string; position: number } {
  const result = safeEvaluateExpression(source);
  if (result.ok) throw new Error(`expected an error for ${JSON.stringify(source)}, got ${result.value}`);
  return { code: result.error.code, position: result.error.position };
}

describe('evaluateExpression: numbers', () => {
  it.each([
    ['42', 42],
    ['3.25', 3.25],
    ['.5', 0.5],
    ['1.', 1],
    ['1e3', 1000],
    ['2.5E-2', 0.025],
    ['1e+2', 100],
    ['  7 \t\n', 7],
  ])('%j = %d', (source, expected) => {
    expect(evaluateExpression(source)).toBe(expected);
  });

  it('never returns negative zero', () => {
    expect(Object.is(evaluateExpression('-0'), 0)).toBe(true);
    expect(Object.is(evaluateExpression('0 * -1'), 0)).toBe(true);
  });
});

describe('evaluateExpression: precedence and associativity', () => {
  it.each([
    ['1 + 2 * 3', 7],
    ['(1 + 2) * 3', 9],
    ['2 * 3 ^ 2', 18],
    ['10 - 4 - 3', 3],
    ['100 / 10 / 2', 5],
    ['2 ^ 3 ^ 2', 512],
    ['(2 ^ 3) ^ 2', 64],
    ['-2 ^ 2', -4],
    ['(-2) ^ 2', 4],
    ['2 ^ -1', 0.5],
    ['2 * -3', -6],
    ['2 - -3', 5],
    ['--3', 3],
    ['+3', 3],
    ['-+-3', 3],
    ['7 % 4', 3],
    ['-7 % 4', -3],
    ['7.5 % 2', 1.5],
    ['1 + 2 * 3 ^ 2 % 5', 1 + ((2 * 9) % 5)],
    ['2 * 3 % 4', 2],
  ])('%j = %d', (source, expected) => {
    expect(evaluateExpression(source)).toBe(expected);
  });
});

describe('evaluateExpression: functions and constants', () => {
  it.each([
    ['sqrt(16)', 4],
    ['abs(-3.5)', 3.5],
    ['floor(2.7)', 2],
    ['floor(-2.5)', -3],
    ['ceil(2.1)', 3],
    ['round(2.5)', 3],
    ['round(-2.5)', -2],
    ['min(3, 1, 2)', 1],
    ['max(3, 1, 2)', 3],
    ['min(4)', 4],
    ['ln(e)', 1],
    ['log10(1000)', 3],
    ['exp(0)', 1],
    ['sin(0)', 0],
    ['cos(pi)', -1],
    ['tan(0)', 0],
    ['pi', Math.PI],
    ['e', Math.E],
    ['max(1, min(5, 3), 2 ^ 2)', 4],
    ['sqrt(abs(-9)) * 2', 6],
  ])('%j = %d', (source, expected) => {
    expect(evaluateExpression(source)).toBeCloseTo(expected, 12);
  });
});

describe('evaluateExpression: typed errors with positions', () => {
  it.each([
    ['', 'math.syntax', 0],
    ['1 +', 'math.syntax', 3],
    ['(1', 'math.syntax', 2],
    ['1)', 'math.syntax', 1],
    ['2pi', 'math.syntax', 1],
    ['1 ** 2', 'math.syntax', 3],
    ['1, 2', 'math.syntax', 1],
    ['3 $ 4', 'math.syntax', 2],
    ['sqrt 4', 'math.syntax', 5],
    ['pi(2)', 'math.syntax', 2],
    ['1.2.3', 'math.syntax', 3],
    ['foo', 'math.unknown_name', 0],
    ['1 + constructor', 'math.unknown_name', 4],
    ['toString(1)', 'math.unknown_name', 0],
    ['PI', 'math.unknown_name', 0],
    ['min()', 'math.arity', 0],
    ['sqrt(1, 2)', 'math.arity', 0],
    ['1 / 0', 'math.division_by_zero', 2],
    ['5 % 0', 'math.division_by_zero', 2],
    ['1 / (2 - 2)', 'math.division_by_zero', 2],
    ['sqrt(-1)', 'math.non_finite', 0],
    ['ln(0)', 'math.non_finite', 0],
    ['1e400', 'math.non_finite', 0],
    ['10 ^ 400', 'math.non_finite', 3],
    ['1e308 * 10', 'math.non_finite', 6],
    ['0 ^ -1', 'math.non_finite', 2],
  ])('%j fails with %s at %d', (source, code, position) => {
    expect(errorOf(source)).toEqual({ code, position });
  });

  it('throws an ExpressionError that is also a VeetbotError', () => {
    try {
      evaluateExpression('1 / 0');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ExpressionError);
      expect((error as ExpressionError).retryable).toBe(false);
      expect((error as ExpressionError).message).toContain('position 2');
    }
  });

  it('enforces maxLength when given', () => {
    const result = safeEvaluateExpression('1+1', { maxLength: 2 });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.error.code).toBe('math.too_long');
    expect(evaluateExpression('1+1', { maxLength: 3 })).toBe(2);
  });
});

describe('evaluateExpression: nesting limit', () => {
  const nested = (depth: number): string => `${'('.repeat(depth)}1${')'.repeat(depth)}`;

  it(`accepts ${DEFAULT_MAX_DEPTH} nested parentheses and refuses one more`, () => {
    expect(evaluateExpression(nested(DEFAULT_MAX_DEPTH))).toBe(1);
    expect(errorOf(nested(DEFAULT_MAX_DEPTH + 1)).code).toBe('math.too_deep');
  });

  it('fails cleanly, not with a stack overflow, 100k deep', () => {
    for (const source of [
      nested(100_000),
      `${'('.repeat(100_000)}`,
      `${'-'.repeat(100_000)}1`,
      `${'2^'.repeat(100_000)}1`,
      `${'sqrt('.repeat(100_000)}1`,
    ]) {
      const result = safeEvaluateExpression(source);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.code).toBe('math.too_deep');
    }
  });

  it('evaluates a long flat chain with constant stack', () => {
    expect(evaluateExpression(`${'1+'.repeat(100_000)}1`)).toBe(100_001);
    // 1 - 1 - … - 0 with 10,000 ones: left-associative, so 1 - 9,999.
    expect(evaluateExpression(`${'1-'.repeat(10_000)}0`)).toBe(-9_998);
  });

  it('honours a custom maxDepth', () => {
    expect(safeEvaluateExpression('((1))', { maxDepth: 1 }).ok).toBe(false);
    expect(evaluateExpression('((1))', { maxDepth: 2 })).toBe(1);
  });
});

// --- Property tests against a reference evaluator for +, -, * on small integers ---

type Ast = { k: 'num'; v: number } | { k: 'neg'; e: Ast } | { k: 'bin'; op: '+' | '-' | '*'; l: Ast; r: Ast };

/** The reference: BigInt arithmetic over the tree, so it is exact whatever the parser does. */
function reference(ast: Ast): bigint {
  switch (ast.k) {
    case 'num':
      return BigInt(ast.v);
    case 'neg':
      return -reference(ast.e);
    case 'bin': {
      const l = reference(ast.l);
      const r = reference(ast.r);
      return ast.op === '+' ? l + r : ast.op === '-' ? l - r : l * r;
    }
  }
}

const precedence = (ast: Ast): number => (ast.k === 'num' ? 4 : ast.k === 'neg' ? 3 : ast.op === '*' ? 2 : 1);

/** Tokens with the fewest parentheses the grammar needs (left-associative binary operators). */
function minimalTokens(ast: Ast): string[] {
  const wrap = (inner: Ast, needs: boolean): string[] => (needs ? ['(', ...minimalTokens(inner), ')'] : minimalTokens(inner));
  switch (ast.k) {
    case 'num':
      return [String(ast.v)];
    case 'neg':
      return ['-', ...wrap(ast.e, ast.e.k === 'bin')];
    case 'bin': {
      const p = precedence(ast);
      return [...wrap(ast.l, precedence(ast.l) < p), ast.op, ...wrap(ast.r, precedence(ast.r) <= p)];
    }
  }
}

function fullTokens(ast: Ast): string[] {
  switch (ast.k) {
    case 'num':
      return [String(ast.v)];
    case 'neg':
      return ['(', '-', ...fullTokens(ast.e), ')'];
    case 'bin':
      return ['(', ...fullTokens(ast.l), ast.op, ...fullTokens(ast.r), ')'];
  }
}

const { ast: astArbitrary } = fc.letrec<{ ast: Ast; num: Ast; neg: Ast; bin: Ast }>((tie) => ({
  // maxDepth 4 with operands 0..9 keeps every value below 9^16 < 2^53: exact in a double.
  ast: fc.oneof({ maxDepth: 4, depthIdentifier: 'ast' }, tie('num'), tie('neg'), tie('bin')),
  num: fc.integer({ min: 0, max: 9 }).map((v): Ast => ({ k: 'num', v })),
  neg: tie('ast').map((e): Ast => ({ k: 'neg', e })),
  bin: fc
    .record({ op: fc.constantFrom('+' as const, '-' as const, '*' as const), l: tie('ast'), r: tie('ast') })
    .map((b): Ast => ({ k: 'bin', ...b })),
}));

const spacing = fc.array(fc.constantFrom('', '', ' ', '  ', '\t', '\n'), { minLength: 1, maxLength: 16 });
const join = (tokens: string[], gaps: string[]): string => tokens.map((t, i) => t + (gaps[i % gaps.length] as string)).join('');

describe('evaluateExpression: properties', () => {
  it('agrees with the reference on minimally parenthesized expressions', () => {
    fc.assert(
      fc.property(astArbitrary, spacing, (ast, gaps) => {
        const expected = reference(ast);
        expect(evaluateExpression(join(minimalTokens(ast), gaps))).toBe(Number(expected));
      }),
      { numRuns: 400 },
    );
  });

  it('agrees with the reference on fully parenthesized expressions', () => {
    fc.assert(
      fc.property(astArbitrary, (ast) => {
        expect(evaluateExpression(fullTokens(ast).join(''))).toBe(Number(reference(ast)));
      }),
      { numRuns: 200 },
    );
  });

  it('is left-associative for - and /, right-associative for ^', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 50 }), fc.integer({ min: 1, max: 50 }), (a, b, c) => {
        expect(evaluateExpression(`${a} - ${b} - ${c}`)).toBe(a - b - c);
        expect(evaluateExpression(`${a} / ${b} / ${c}`)).toBe(a / b / c);
        const small = [a % 4, b % 3, c % 3];
        expect(evaluateExpression(`${small[0]} ^ ${small[1]} ^ ${small[2]}`)).toBe(small[0]! ** (small[1]! ** small[2]!));
      }),
    );
  });

  it('never throws anything but an ExpressionError, and never returns a non-finite number', () => {
    const alphabet = [...'0123456789.+-*/%^(), e', 'pi', 'sqrt', 'min', 'max', 'ln', 'foo', '1e'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...alphabet), { maxLength: 30 }), (parts) => {
        const source = parts.join('');
        const result = safeEvaluateExpression(source);
        if (result.ok) {
          expect(Number.isFinite(result.value)).toBe(true);
        } else {
          expect(result.error).toBeInstanceOf(ExpressionError);
          expect(result.error.position).toBeGreaterThanOrEqual(0);
          expect(result.error.position).toBeLessThanOrEqual(source.length);
        }
      }),
      { numRuns: 1_000 },
    );
  });
});
