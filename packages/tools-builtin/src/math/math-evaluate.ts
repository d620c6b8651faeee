import type { Tool } from '@veetbot/ports';
import { defineBuiltinSpec, JSON_SCHEMA_DIALECT } from '../builtin-spec';
import { toolFailure, toolSuccess } from '../tool-result-helpers';
import { type ExpressionErrorCode, safeEvaluateExpression } from './expression-parser';

export const MATH_EXPRESSION_MAX_LENGTH = 1_000;

/** Each parser error maps to one stable `tool.invalid_arguments.{detail}` (§ ToolResult). */
const REASON_DETAIL: Readonly<Record<ExpressionErrorCode, string>> = {
  'math.syntax': 'expression_syntax',
  'math.unknown_name': 'expression_unknown_name',
  'math.arity': 'expression_arity',
  'math.division_by_zero': 'division_by_zero',
  'math.non_finite': 'non_finite',
  'math.too_deep': 'expression_too_deep',
  'math.too_long': 'expression_too_long',
};

export const mathEvaluateSpec = defineBuiltinSpec({
  name: 'math.evaluate',
  version: '1.0.0',
  description:
    'Evaluate an arithmetic expression and return the number. Supports + - * / % ^ (power, right-associative), ' +
    'unary + and -, parentheses, the functions sqrt abs floor ceil round min max ln log10 exp sin cos tan ' +
    '(angles in radians) and the constants pi and e.',
  input_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: {
      expression: { type: 'string', minLength: 1, maxLength: MATH_EXPRESSION_MAX_LENGTH, description: 'For example "2 * (3 + 4) ^ 2".' },
    },
    required: ['expression'],
    additionalProperties: false,
  },
  output_schema: {
    $schema: JSON_SCHEMA_DIALECT,
    type: 'object',
    properties: { value: { type: 'number' } },
    required: ['value'],
    additionalProperties: false,
  },
  // Pure computation: nothing leaves the process, so nothing needs a watermark.
  side_effect: 'none',
  risk: 'low',
  idempotency: 'read_only',
  required_scopes: [],
  timeout_seconds: 5,
  maximum_output_bytes: 4_096,
  allow_parallel: true,
  output_trust: 'internal_tool',
});

export function createMathEvaluateTool(): Tool {
  return {
    spec: mathEvaluateSpec,
    async execute(args) {
      const expression = args.expression;
      if (typeof expression !== 'string') {
        return toolFailure('invalid_arguments', 'expression_syntax', 'expression must be a string');
      }
      const result = safeEvaluateExpression(expression, { maxLength: MATH_EXPRESSION_MAX_LENGTH });
      if (!result.ok) {
        return toolFailure('invalid_arguments', REASON_DETAIL[result.error.code], result.error.message);
      }
      return toolSuccess(String(result.value), { value: result.value });
    },
  };
}
