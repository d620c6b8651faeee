import { describe, expect, it } from 'vitest';
import { ToolFailure, ToolFailureKind, ToolResult, ToolSpec } from '../src/index';
import type { ToolSpecInput } from '../src/index';

// § ToolSpec, completed; § ToolResult; RULINGS.md contradiction 2 (outcome_unknown).

const declaration: ToolSpecInput = {
  name: 'workspace.read_text',
  version: '1.0.0',
  description: 'Read a text file from the workspace.',
  input_schema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
  output_schema: null,
  side_effect: 'workspace_read',
  risk: 'low',
  idempotency: 'read_only',
  required_scopes: ['workspace.read'],
  timeout_seconds: 10,
  maximum_output_bytes: 65_536,
  allow_parallel: true,
  output_trust: 'internal_tool',
};

describe('ToolSpec', () => {
  it('applies the defaults', () => {
    const spec = ToolSpec.parse(declaration);
    expect(spec.kind).toBe('capability');
    expect(spec.target_kind).toBe('in_process');
    expect(spec.source).toBe('builtin');
    expect(spec.model_visible).toBe(true);
    expect(spec.deprecated).toBe(false);
    expect(spec.server_id).toBeNull();
    expect(spec.device_id).toBeNull();
    expect(spec.output_trust).toBe('internal_tool');
  });

  it('keeps explicit values over defaults', () => {
    const spec = ToolSpec.parse({
      ...declaration,
      kind: 'control',
      source: 'mcp',
      server_id: 'acme',
      model_visible: false,
      target_kind: 'mcp',
    });
    expect(spec).toMatchObject({ kind: 'control', source: 'mcp', server_id: 'acme', model_visible: false, target_kind: 'mcp' });
  });

  it('requires output_trust: it is never defaulted', () => {
    const { output_trust: _omitted, ...withoutTrust } = declaration;
    const result = ToolSpec.safeParse(withoutTrust);
    expect(result.success).toBe(false);
    expect(result.error!.issues.map((i) => i.path.join('.'))).toContain('output_trust');
  });

  it('rejects an unknown field (strict)', () => {
    const result = ToolSpec.safeParse({ ...declaration, trust: 'platform' });
    expect(result.success).toBe(false);
    expect(result.error!.issues[0]!.code).toBe('unrecognized_keys');
  });

  it('dedupes and sorts required_scopes', () => {
    const spec = ToolSpec.parse({ ...declaration, required_scopes: ['b.write', 'a.read', 'b.write', 'a.read', 'c'] });
    expect(spec.required_scopes).toEqual(['a.read', 'b.write', 'c']);
  });

  it.each([
    ['an uppercase enum value', { side_effect: 'EXTERNAL_WRITE' }],
    ['an unknown trust label', { output_trust: 'trusted' }],
    ['a zero timeout', { timeout_seconds: 0 }],
    ['a fractional output limit', { maximum_output_bytes: 10.5 }],
    ['an empty scope', { required_scopes: [''] }],
    ['an unknown target kind', { target_kind: 'ftp' }],
  ])('rejects %s', (_label, change) => {
    expect(ToolSpec.safeParse({ ...declaration, ...change }).success).toBe(false);
  });
});

describe('ToolResult', () => {
  const failure = { kind: 'upstream_error', reason_code: 'tool.upstream_error', detail: 'HTTP 500', retryable: true } as const;

  it('an ok result parses with defaults', () => {
    const result = ToolResult.parse({ ok: true, content: [{ type: 'text', text: 'hello' }] });
    expect(result).toEqual({
      ok: true,
      content: [{ type: 'text', text: 'hello' }],
      structured: null,
      artifacts: [],
      failure: null,
      output_trust: null,
      metrics: {},
      evidence_key: null,
      browser_diagnostics: null,
    });
  });

  it('a failed result carries its failure, external_text defaulted to null', () => {
    const result = ToolResult.parse({ ok: false, content: [], failure });
    expect(result.failure).toEqual({ ...failure, external_text: null });
  });

  it('rejects ok with a failure, and not-ok without one', () => {
    expect(ToolResult.safeParse({ ok: true, content: [], failure }).success).toBe(false);
    expect(ToolResult.safeParse({ ok: false, content: [] }).success).toBe(false);
    expect(ToolResult.safeParse({ ok: false, content: [], failure: null }).success).toBe(false);
  });

  it('cannot express denial or uncertainty: only ok and failure', () => {
    expect(ToolResult.safeParse({ ok: true, content: [], status: 'denied' }).success).toBe(false);
  });

  it('rejects an artifact reference with a malformed sha256 or an inline payload', () => {
    const artifact = {
      artifact_id: '0b0e7c1e-4f5a-4c1e-9d52-6f1d2c3b4a59',
      media_type: 'text/plain',
      bytes: 12,
      sha256: 'a'.repeat(64),
      trust: 'external_untrusted',
    };
    expect(ToolResult.safeParse({ ok: true, content: [{ type: 'artifact', artifact }] }).success).toBe(true);
    expect(
      ToolResult.safeParse({ ok: true, content: [{ type: 'artifact', artifact: { ...artifact, sha256: 'A'.repeat(64) } }] }).success,
    ).toBe(false);
    expect(ToolResult.safeParse({ ok: true, content: [{ type: 'artifact', artifact: { ...artifact, data: 'aGk=' } }] }).success).toBe(
      false,
    );
  });
});

describe('ToolFailure', () => {
  it('kinds include outcome_unknown (RULINGS.md contradiction 2)', () => {
    expect(ToolFailureKind.options).toContain('outcome_unknown');
    expect(
      ToolFailure.safeParse({ kind: 'outcome_unknown', reason_code: 'tool.outcome_unknown', detail: '', retryable: false }).success,
    ).toBe(true);
  });

  it('rejects an unknown kind or a malformed reason code', () => {
    expect(ToolFailure.safeParse({ kind: 'exploded', reason_code: 'tool.internal', detail: '', retryable: false }).success).toBe(false);
    expect(ToolFailure.safeParse({ kind: 'internal', reason_code: 'Tool Internal', detail: '', retryable: false }).success).toBe(false);
    expect(ToolFailure.safeParse({ kind: 'internal', reason_code: 'internal', detail: '', retryable: false }).success).toBe(false);
  });
});
