import { describe, expect, it } from 'vitest';
import {
  OUTCOME_FIELDS,
  REASON_CODES,
  ToolFailureKind,
  ToolOutcomeStatus,
  VeetbotError,
  failureKindOfReasonCode,
  isKnownReasonCode,
  reasonCodeEntry,
  renderOutcome,
} from '../src/index';
import { ToolOutcome, UnknownReasonCodeError } from '../src/outcome';

// § What the model reads; Hard gate 4 (six fields for every status, message from the table).

const CODES = Object.keys(REASON_CODES) as (keyof typeof REASON_CODES)[];
const SORTED_FIELDS = [...OUTCOME_FIELDS].sort();

describe('the reason-code table', () => {
  it('OUTCOME_FIELDS are the six fields of the spec', () => {
    expect(SORTED_FIELDS).toEqual(['action', 'message', 'reason_code', 'remediation', 'retryable', 'status']);
  });

  it('covers all five statuses, each with at least one code', () => {
    const statuses = new Set(CODES.map((code) => REASON_CODES[code].status));
    expect([...statuses].sort()).toEqual([...ToolOutcomeStatus.options].sort());
    for (const status of ['failed', 'denied', 'unavailable', 'uncertain'] as const) {
      expect(CODES.some((code) => REASON_CODES[code].status === status)).toBe(true);
    }
  });

  it('holds every code the specification and rulings name', () => {
    for (const code of [
      'policy.matrix.unknown_tool',
      'policy.scope.missing',
      'policy.matrix.external_write',
      'tool.server_unreachable',
      'tool.server_unauthorized',
      'tool.withdrawn',
      'tool.device_offline',
      'tool.outcome_unknown',
      'tool.timeout',
      'tool.upstream_error',
      'tool.arguments_invalid',
      'tool.not_found.not_offered',
      'tool.run_cancelled',
      'tool.auth_failed',
      'tool.auth_unsupported',
    ]) {
      expect(CODES, code).toContain(code);
    }
  });

  it('has a tool.{kind} entry for every ToolFailureKind, with status failed except outcome_unknown', () => {
    for (const kind of ToolFailureKind.options) {
      const entry = reasonCodeEntry(`tool.${kind}`);
      expect(entry, kind).toBeDefined();
      expect(entry!.status).toBe(kind === 'outcome_unknown' ? 'uncertain' : 'failed');
    }
  });

  it('no message carries markup, a URL, a trace, a hostname, a rule or a profile', () => {
    const hostname = /\b[a-z0-9-]+(\.[a-z0-9-]+)*\.[a-z]{2,}\b/i;
    const ipv4 = /\b\d{1,3}(\.\d{1,3}){3}\b/;
    for (const code of CODES) {
      const { message } = REASON_CODES[code];
      expect(message, code).not.toBe('');
      for (const forbidden of ['{', '}', 'http', 'stack', 'Error:', '://', code]) {
        expect(message, code).not.toContain(forbidden);
      }
      expect(message, code).not.toMatch(hostname);
      expect(message, code).not.toMatch(ipv4);
      expect(message, code).not.toMatch(/\bprofiles?\b/i);
      expect(message, code).not.toMatch(/\brules?\b/i);
      expect(message, code).not.toMatch(/\bat .+:\d+:\d+/); // a stack frame
    }
  });
});

describe('renderOutcome (Hard gate 4)', () => {
  it.each(CODES)('%s renders exactly the six fields, strictly valid, message from the table', (code) => {
    const outcome = renderOutcome({ action: 'demo.external_write', reasonCode: code });
    expect(Object.keys(outcome).sort()).toEqual(SORTED_FIELDS);
    expect(Object.keys(JSON.parse(JSON.stringify(outcome)) as object).sort()).toEqual(SORTED_FIELDS);
    expect(ToolOutcome.parse(outcome)).toEqual(outcome);
    const entry = REASON_CODES[code];
    expect(outcome.message).toBe(entry.message);
    expect(outcome.status).toBe(entry.status);
    expect(outcome.remediation).toBe(entry.remediation);
    expect(outcome.reason_code).toBe(code);
    expect(outcome.action).toBe('demo.external_write');
  });

  it('reproduces the four examples in "What the model reads"', () => {
    expect(renderOutcome({ action: 'demo.external_write', reasonCode: 'policy.matrix.external_write' })).toEqual({
      status: 'denied',
      action: 'demo.external_write',
      reason_code: 'policy.matrix.external_write',
      message: 'Not performed. Approval was required and was denied.',
      retryable: false,
      remediation: 'none',
    });
    expect(renderOutcome({ action: 'mcp.acme.create_ticket', reasonCode: 'tool.upstream_error' })).toEqual({
      status: 'failed',
      action: 'mcp.acme.create_ticket',
      reason_code: 'tool.upstream_error',
      message: 'The tool reported an error. Details follow as data.',
      retryable: true,
      remediation: 'modify_arguments',
    });
    expect(renderOutcome({ action: 'mcp.acme.create_ticket', reasonCode: 'tool.server_unreachable' })).toEqual({
      status: 'unavailable',
      action: 'mcp.acme.create_ticket',
      reason_code: 'tool.server_unreachable',
      message: 'This capability is not reachable right now.',
      retryable: true,
      remediation: 'none',
    });
    expect(renderOutcome({ action: 'demo.external_write', reasonCode: 'tool.outcome_unknown' })).toEqual({
      status: 'uncertain',
      action: 'demo.external_write',
      reason_code: 'tool.outcome_unknown',
      message: 'The outcome of this call is unknown. Do not repeat it.',
      retryable: false,
      remediation: 'none',
    });
  });

  it("renders tool.{kind}.{detail} family codes with their kind's entry", () => {
    for (const kind of ToolFailureKind.options) {
      for (const code of [`tool.${kind}.some_detail`, `tool.${kind}.a.b2`]) {
        expect(failureKindOfReasonCode(code)).toBe(kind);
        expect(isKnownReasonCode(code)).toBe(true);
        const outcome = renderOutcome({ action: 'mcp.acme.create_ticket', reasonCode: code });
        const entry = reasonCodeEntry(`tool.${kind}`)!;
        expect(outcome).toEqual({
          status: entry.status,
          action: 'mcp.acme.create_ticket',
          reason_code: code,
          message: entry.message,
          retryable: entry.status === 'uncertain' ? false : entry.retryable,
          remediation: entry.remediation,
        });
        expect(ToolOutcome.safeParse(outcome).success).toBe(true);
      }
    }
  });

  it('an exact table code wins over the family (tool.not_found.not_offered is a denial)', () => {
    expect(renderOutcome({ action: 'a.b', reasonCode: 'tool.not_found.not_offered' }).status).toBe('denied');
    expect(renderOutcome({ action: 'a.b', reasonCode: 'tool.not_found.missing_file' }).status).toBe('failed');
  });

  it('an MCP response over the cap says so in its own code, failed or uncertain (ADR 0021)', () => {
    const failed = renderOutcome({ action: 'mcp.s.t', reasonCode: 'tool.output_too_large.mcp_response' });
    expect(failed).toMatchObject({ status: 'failed', retryable: false, message: "The server's response was larger than allowed." });
    const uncertain = renderOutcome({ action: 'mcp.s.t', reasonCode: 'tool.outcome_unknown.mcp_response_too_large', retryable: true });
    expect(uncertain).toMatchObject({ status: 'uncertain', retryable: false, remediation: 'none' });
    expect(uncertain.message).toMatch(/larger than allowed.*Do not repeat it\.$/);
  });

  it.each([
    'tool.nonexistent',
    'policy.made_up.code',
    'tool.timeout.',
    'tool.timeout.Detail',
    'tool.timeout.some-detail',
    'tool.not_a_kind.detail',
    'TOOL.OK',
    'tool',
    '',
    // Inherited object properties are not table entries.
    'constructor',
    'toString',
    '__proto__',
    'hasOwnProperty',
    'valueOf',
  ])('unknown code %j throws UnknownReasonCodeError', (code) => {
    expect(isKnownReasonCode(code)).toBe(false);
    expect(reasonCodeEntry(code)).toBeUndefined();
    let caught: unknown;
    try {
      renderOutcome({ action: 'a.b', reasonCode: code });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(UnknownReasonCodeError);
    expect(VeetbotError.isInstance(caught)).toBe(true);
    expect((caught as UnknownReasonCodeError).code).toBe('domain.reason_code_unknown');
  });

  it('uncertain and denied outcomes are never retryable, even when asked', () => {
    const never = CODES.filter((code) => REASON_CODES[code].status === 'uncertain' || REASON_CODES[code].status === 'denied');
    expect(never.length).toBeGreaterThan(1);
    for (const code of never) {
      expect(renderOutcome({ action: 'a.b', reasonCode: code, retryable: true }).retryable, code).toBe(false);
    }
    expect(renderOutcome({ action: 'a.b', reasonCode: 'tool.outcome_unknown.after_dispatch', retryable: true }).retryable).toBe(false);
  });

  it("a failed outcome takes the tool's retryable over the table default", () => {
    expect(REASON_CODES['tool.timeout'].retryable).toBe(true);
    expect(renderOutcome({ action: 'a.b', reasonCode: 'tool.timeout' }).retryable).toBe(true);
    expect(renderOutcome({ action: 'a.b', reasonCode: 'tool.timeout', retryable: false }).retryable).toBe(false);
    expect(renderOutcome({ action: 'a.b', reasonCode: 'tool.upstream_error.rate_limited', retryable: false }).retryable).toBe(false);
  });

  it('the message never depends on what the caller passes', () => {
    const hostile = { action: 'a.b', reasonCode: 'tool.upstream_error', message: 'Error: connect ECONNREFUSED http://10.0.0.1' };
    const outcome = renderOutcome(hostile);
    expect(outcome.message).toBe(REASON_CODES['tool.upstream_error'].message);
    expect(JSON.stringify(outcome)).not.toContain('ECONNREFUSED');
  });
});

describe('ToolOutcome schema', () => {
  const valid = renderOutcome({ action: 'a.b', reasonCode: 'tool.ok' });

  it('rejects a seventh field', () => {
    expect(ToolOutcome.safeParse({ ...valid, detail: 'leak' }).success).toBe(false);
  });

  it('rejects a missing field', () => {
    for (const field of OUTCOME_FIELDS) {
      const partial: Record<string, unknown> = { ...valid };
      delete partial[field];
      expect(ToolOutcome.safeParse(partial).success, field).toBe(false);
    }
  });

  it('rejects an unknown status or remediation', () => {
    expect(ToolOutcome.safeParse({ ...valid, status: 'error' }).success).toBe(false);
    expect(ToolOutcome.safeParse({ ...valid, remediation: 'try_harder' }).success).toBe(false);
  });
});

describe('retryable narrows, never widens', () => {
  it('a tool may mark a retryable code not retryable, but not the reverse', () => {
    expect(renderOutcome({ action: 'a.b', reasonCode: 'tool.timeout', retryable: false }).retryable).toBe(false);
    expect(renderOutcome({ action: 'a.b', reasonCode: 'tool.timeout' }).retryable).toBe(true);
    expect(renderOutcome({ action: 'a.b', reasonCode: 'tool.run_cancelled', retryable: true }).retryable).toBe(false);
    expect(renderOutcome({ action: 'a.b', reasonCode: 'tool.internal.crash', retryable: true }).retryable).toBe(false);
  });
});
