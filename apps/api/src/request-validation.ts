import type { z } from 'zod';
import { ApiError } from './api-error';

/**
 * A zod failure as `request.invalid`: the path of the first issue and what was expected —
 * never the value that was sent (it may be a secret pasted in the wrong field, or megabytes).
 */
export function invalidRequest(where: 'body' | 'query', error: z.ZodError): ApiError {
  const issue = error.issues[0];
  if (issue === undefined) return new ApiError(400, 'request.invalid', `The request ${where} is invalid.`);
  const path = issue.path.map(String).join('.');
  const at = path === '' ? where : `${where}.${path}`;
  return new ApiError(400, 'request.invalid', `Invalid request at ${at}: ${describeIssue(issue)}.`);
}

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'invalid_type':
      return `expected ${issue.expected}`;
    case 'unrecognized_keys':
      return `unknown field${issue.keys.length === 1 ? '' : 's'} ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}`;
    case 'invalid_value':
      return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    // An exclusive bound says so: `deadline_seconds: 0` against `.positive()` is "must be
    // greater than 0", not "minimum 0" (which 0 would satisfy).
    case 'too_small':
      return `must be ${issue.inclusive === false ? 'greater than' : 'at least'} ${String(issue.minimum)}${unitOf(issue.origin)}`;
    case 'too_big':
      return `must be ${issue.inclusive === false ? 'less than' : 'at most'} ${String(issue.maximum)}${unitOf(issue.origin)}`;
    case 'invalid_format':
      return `expected the ${issue.format} format`;
    case 'not_multiple_of':
      return `expected a multiple of ${String(issue.divisor)}`;
    case 'invalid_union':
      return 'matches none of the allowed shapes';
    case 'invalid_key':
      return 'has an invalid key';
    case 'invalid_element':
      return 'has an invalid element';
    default:
      return 'is invalid';
  }
}

function unitOf(origin: string): string {
  return origin === 'string' ? ' characters' : origin === 'array' ? ' items' : '';
}

/** Parse a JSON body; an empty body is treated as `{}` only where `emptyAllowed`. */
export function parseJsonBody(text: string, emptyAllowed: boolean): unknown {
  if (text.trim() === '') {
    if (emptyAllowed) return {};
    throw new ApiError(400, 'request.invalid_json', 'The request body is empty; send a JSON object.');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiError(400, 'request.invalid_json', 'The request body is not valid JSON.');
  }
}
