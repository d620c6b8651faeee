import { VeetbotError } from '@veetbot/domain';

/**
 * The arithmetic language of math.evaluate: a recursive-descent parser that evaluates as it
 * parses. There is no eval, no Function, and no AST: left-associative chains are loops, so
 * "1+1+…+1" of any length uses constant stack, and every construct that does recurse
 * (parentheses, function arguments, unary signs, the exponent of ^) counts against a depth
 * limit, so "((((…" a hundred thousand deep fails with a typed error instead of overflowing
 * the stack.
 *
 *   expression := term (('+' | '-') term)*
 *   term       := unary (('*' | '/' | '%') unary)*
 *   unary      := ('+' | '-') unary | power
 *   power      := primary ('^' unary)?          right-associative: 2^3^2 = 2^(3^2)
 *   primary    := number | constant | function '(' expression (',' expression)* ')' | '(' expression ')'
 *
 * Unary minus binds looser than ^ (-2^2 = -4), and the exponent may carry a sign (2^-1 = 0.5),
 * as in conventional notation. % is the remainder with the sign of the dividend (JavaScript's).
 * round() rounds halves towards +∞ (Math.round). There is no implicit multiplication: "2pi" is
 * a syntax error.
 */

export type ExpressionErrorCode =
  | 'math.syntax'
  | 'math.unknown_name'
  | 'math.arity'
  | 'math.division_by_zero'
  | 'math.non_finite'
  | 'math.too_deep'
  | 'math.too_long';

/** A typed failure with the 0-based offset into the expression where it was found. */
export class ExpressionError extends VeetbotError {
  declare readonly code: ExpressionErrorCode;
  readonly position: number;

  constructor(code: ExpressionErrorCode, message: string, position: number) {
    super(code, `${message} (at position ${position})`);
    this.position = position;
  }
}

export const DEFAULT_MAX_DEPTH = 256;

export interface EvaluateOptions {
  /** Nesting limit over parentheses, function calls, unary signs and exponents. */
  readonly maxDepth?: number;
  /** Longest accepted expression in UTF-16 code units; unlimited when absent. */
  readonly maxLength?: number;
}

type Operator = '+' | '-' | '*' | '/' | '%' | '^' | '(' | ')' | ',';

type Token =
  | { readonly type: 'number'; readonly value: number; readonly pos: number }
  | { readonly type: 'name'; readonly name: string; readonly pos: number }
  | { readonly type: 'op'; readonly op: Operator; readonly pos: number }
  | { readonly type: 'end'; readonly pos: number };

interface MathFunction {
  readonly minArgs: number;
  readonly maxArgs: number;
  apply(args: readonly number[]): number;
}

const unary = (fn: (x: number) => number): MathFunction => ({
  minArgs: 1,
  maxArgs: 1,
  apply: (args) => fn(args[0] as number),
});

// Maps, not object literals: a name like "constructor" must not find Object.prototype.
const FUNCTIONS: ReadonlyMap<string, MathFunction> = new Map([
  ['sqrt', unary(Math.sqrt)],
  ['abs', unary(Math.abs)],
  ['floor', unary(Math.floor)],
  ['ceil', unary(Math.ceil)],
  ['round', unary(Math.round)],
  ['ln', unary(Math.log)],
  ['log10', unary(Math.log10)],
  ['exp', unary(Math.exp)],
  ['sin', unary(Math.sin)],
  ['cos', unary(Math.cos)],
  ['tan', unary(Math.tan)],
  // reduce, not Math.min(...args): spreading an unbounded argument list can exceed the engine's limit.
  ['min', { minArgs: 1, maxArgs: Number.POSITIVE_INFINITY, apply: (args) => args.reduce((a, b) => Math.min(a, b)) }],
  ['max', { minArgs: 1, maxArgs: Number.POSITIVE_INFINITY, apply: (args) => args.reduce((a, b) => Math.max(a, b)) }],
]);

const CONSTANTS: ReadonlyMap<string, number> = new Map([
  ['pi', Math.PI],
  ['e', Math.E],
]);

/** The names the language knows, for documentation and tests. */
export const EXPRESSION_FUNCTIONS: readonly string[] = [...FUNCTIONS.keys()];
export const EXPRESSION_CONSTANTS: readonly string[] = [...CONSTANTS.keys()];

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isNameStart = (c: string | undefined): boolean => c !== undefined && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c === '_');
const isNamePart = (c: string | undefined): boolean => isNameStart(c) || isDigit(c);
const isSpace = (c: string): boolean => c === ' ' || c === '\t' || c === '\n' || c === '\r';

function tokenize(source: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < source.length) {
    const c = source[i] as string;
    if (isSpace(c)) {
      i += 1;
      continue;
    }
    if (isDigit(c) || (c === '.' && isDigit(source[i + 1]))) {
      const start = i;
      while (isDigit(source[i])) i += 1;
      if (source[i] === '.') {
        i += 1;
        while (isDigit(source[i])) i += 1;
      }
      // An exponent only when digits follow, so "2e" stays "2" then the name "e" (a syntax error).
      const e = source[i];
      if (
        (e === 'e' || e === 'E') &&
        (isDigit(source[i + 1]) || ((source[i + 1] === '+' || source[i + 1] === '-') && isDigit(source[i + 2])))
      ) {
        i += 2;
        while (isDigit(source[i])) i += 1;
      }
      const value = Number(source.slice(start, i));
      if (!Number.isFinite(value)) throw new ExpressionError('math.non_finite', 'Number literal is out of range', start);
      tokens.push({ type: 'number', value, pos: start });
      continue;
    }
    if (isNameStart(c)) {
      const start = i;
      while (isNamePart(source[i])) i += 1;
      tokens.push({ type: 'name', name: source.slice(start, i), pos: start });
      continue;
    }
    if ('+-*/%^(),'.includes(c)) {
      tokens.push({ type: 'op', op: c as Operator, pos: i });
      i += 1;
      continue;
    }
    throw new ExpressionError('math.syntax', `Unexpected character ${JSON.stringify(c)}`, i);
  }
  tokens.push({ type: 'end', pos: source.length });
  return tokens;
}

function describe(token: Token): string {
  switch (token.type) {
    case 'number':
      return `number ${token.value}`;
    case 'name':
      return `name "${token.name}"`;
    case 'op':
      return `"${token.op}"`;
    case 'end':
      return 'end of expression';
  }
}

function finite(value: number, pos: number): number {
  if (!Number.isFinite(value)) throw new ExpressionError('math.non_finite', 'Result is not a finite number', pos);
  return value;
}

class Evaluator {
  private index = 0;
  private depth = 0;

  constructor(
    private readonly tokens: readonly Token[],
    private readonly maxDepth: number,
  ) {}

  run(): number {
    const value = this.expression();
    const rest = this.peek();
    if (rest.type !== 'end') throw new ExpressionError('math.syntax', `Unexpected ${describe(rest)}`, rest.pos);
    return value;
  }

  private peek(): Token {
    return this.tokens[this.index] as Token;
  }

  private next(): Token {
    const token = this.tokens[this.index] as Token;
    if (token.type !== 'end') this.index += 1;
    return token;
  }

  private isOp(token: Token, ...ops: Operator[]): token is Extract<Token, { type: 'op' }> {
    return token.type === 'op' && ops.includes(token.op);
  }

  /** Every recursion the grammar allows passes through here. */
  private descend<T>(pos: number, inner: () => T): T {
    this.depth += 1;
    if (this.depth > this.maxDepth) {
      throw new ExpressionError('math.too_deep', `Expression nests deeper than ${this.maxDepth} levels`, pos);
    }
    const value = inner();
    this.depth -= 1;
    return value;
  }

  private expression(): number {
    let left = this.term();
    for (let op = this.peek(); this.isOp(op, '+', '-'); op = this.peek()) {
      this.next();
      const right = this.term();
      left = finite(op.op === '+' ? left + right : left - right, op.pos);
    }
    return left;
  }

  private term(): number {
    let left = this.unary();
    for (let op = this.peek(); this.isOp(op, '*', '/', '%'); op = this.peek()) {
      this.next();
      const right = this.unary();
      if (op.op === '*') {
        left = finite(left * right, op.pos);
      } else {
        if (right === 0)
          throw new ExpressionError('math.division_by_zero', op.op === '/' ? 'Division by zero' : 'Remainder by zero', op.pos);
        left = finite(op.op === '/' ? left / right : left % right, op.pos);
      }
    }
    return left;
  }

  private unary(): number {
    const op = this.peek();
    if (this.isOp(op, '+', '-')) {
      this.next();
      const operand = this.descend(op.pos, () => this.unary());
      return op.op === '-' ? -operand : operand;
    }
    return this.power();
  }

  private power(): number {
    const base = this.primary();
    const op = this.peek();
    if (!this.isOp(op, '^')) return base;
    this.next();
    const exponent = this.descend(op.pos, () => this.unary());
    return finite(base ** exponent, op.pos);
  }

  private primary(): number {
    const token = this.next();
    switch (token.type) {
      case 'number':
        return token.value;
      case 'name':
        return this.name(token);
      case 'op':
        if (token.op === '(') {
          const value = this.descend(token.pos, () => this.expression());
          this.expectClose(token.pos);
          return value;
        }
        throw new ExpressionError('math.syntax', `Unexpected ${describe(token)}`, token.pos);
      case 'end':
        throw new ExpressionError('math.syntax', 'Unexpected end of expression', token.pos);
    }
  }

  private name(token: Extract<Token, { type: 'name' }>): number {
    const fn = FUNCTIONS.get(token.name);
    const open = this.peek();
    if (fn === undefined) {
      const constant = CONSTANTS.get(token.name);
      if (constant === undefined) throw new ExpressionError('math.unknown_name', `Unknown name "${token.name}"`, token.pos);
      if (this.isOp(open, '(')) throw new ExpressionError('math.syntax', `"${token.name}" is a constant, not a function`, open.pos);
      return constant;
    }
    if (!this.isOp(open, '(')) throw new ExpressionError('math.syntax', `Expected "(" after function "${token.name}"`, open.pos);
    this.next();
    const args = this.descend(open.pos, () => {
      const values: number[] = [];
      if (this.isOp(this.peek(), ')')) return values;
      values.push(this.expression());
      while (this.isOp(this.peek(), ',')) {
        this.next();
        values.push(this.expression());
      }
      return values;
    });
    this.expectClose(open.pos);
    if (args.length < fn.minArgs || args.length > fn.maxArgs) {
      const expected = fn.minArgs === fn.maxArgs ? `${fn.minArgs}` : `at least ${fn.minArgs}`;
      throw new ExpressionError('math.arity', `Function "${token.name}" takes ${expected} argument(s), got ${args.length}`, token.pos);
    }
    return finite(fn.apply(args), token.pos);
  }

  private expectClose(openPos: number): void {
    const token = this.next();
    if (!this.isOp(token, ')')) {
      throw new ExpressionError('math.syntax', `Expected ")" to close "(" at ${openPos}, found ${describe(token)}`, token.pos);
    }
  }
}

/** Evaluate an expression; throws ExpressionError. The result is finite and never -0. */
export function evaluateExpression(source: string, options: EvaluateOptions = {}): number {
  if (options.maxLength !== undefined && source.length > options.maxLength) {
    throw new ExpressionError('math.too_long', `Expression is longer than ${options.maxLength} characters`, options.maxLength);
  }
  const value = new Evaluator(tokenize(source), options.maxDepth ?? DEFAULT_MAX_DEPTH).run();
  return value === 0 ? 0 : value;
}

export type EvaluationResult = { readonly ok: true; readonly value: number } | { readonly ok: false; readonly error: ExpressionError };

/** The result-value form of evaluateExpression (STYLE.md: a throwing API paired with a safe one). */
export function safeEvaluateExpression(source: string, options: EvaluateOptions = {}): EvaluationResult {
  try {
    return { ok: true, value: evaluateExpression(source, options) };
  } catch (error) {
    if (error instanceof ExpressionError) return { ok: false, error };
    throw error;
  }
}
