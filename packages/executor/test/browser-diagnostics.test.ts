import { type BrowserDiagnostics, ToolSpec, type ToolSpecInput } from '@veetbot/domain';
import type { InvocationRow, NewEvent } from '@veetbot/ports';
import { AjvSchemaValidator } from '@veetbot/validation';
import { describe, expect, it } from 'vitest';
import { ScrubbingCredentialResolver } from '../src/credential-scrubber';
import { writeTerminal } from '../src/lifecycle/terminal-write';
import { validateResult } from '../src/steps/step-11-validate-result';

// ADR-0158 (docs/adr/0079): browser_diagnostics reaches a terminal event only from trusted
// execution — a builtin on the browser_provider target — and never from any other tool.
const DIAGNOSTICS: BrowserDiagnostics = {
  version: 1,
  phase: 'snapshot',
  outcome: 'succeeded',
  failure: 'none',
  placement: 'isolated_sandbox',
  timings: { total_ms: 12, launch_ms: 0, navigation_ms: 7 },
  truncated: false,
};

const base: ToolSpecInput = {
  name: 'browser.snapshot',
  version: '1.0.0',
  description: 'd',
  input_schema: { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' },
  output_schema: null,
  side_effect: 'network_read',
  risk: 'low',
  idempotency: 'read_only',
  required_scopes: [],
  timeout_seconds: 30,
  maximum_output_bytes: 65_536,
  allow_parallel: false,
  target_kind: 'browser_provider',
  output_trust: 'external_untrusted',
};
const credentials = new ScrubbingCredentialResolver({ resolve: () => Promise.reject(new Error('none')) });
const validator = new AjvSchemaValidator();
const returned = (value: unknown) => ({ kind: 'returned' as const, value, effectSent: false, durationMs: 3 });
const ok = { ok: true, content: [{ type: 'text', text: 'page' }], browser_diagnostics: DIAGNOSTICS };

describe('browser_diagnostics is trusted execution only', () => {
  it('is kept from a builtin browser tool, on success and on its own failure', () => {
    const spec = ToolSpec.parse(base);
    expect(validateResult(validator, { spec }, returned(ok), credentials).browserDiagnostics).toEqual(DIAGNOSTICS);
    const failed = {
      ok: false,
      content: [],
      failure: { kind: 'timeout', reason_code: 'tool.timeout.browser_navigation', detail: 'd', retryable: true },
      browser_diagnostics: { ...DIAGNOSTICS, outcome: 'timed_out', failure: 'navigation_timeout' },
    };
    expect(validateResult(validator, { spec }, returned(failed), credentials).browserDiagnostics).toMatchObject({
      failure: 'navigation_timeout',
    });
  });

  it.each([
    ['an MCP tool', { name: 'mcp.web.snapshot', source: 'mcp', server_id: 'web', target_kind: 'mcp' }],
    ['a builtin on another target', { name: 'demo.snapshot', target_kind: 'in_process' }],
    ['a sandbox tool', { name: 'sandbox.snapshot', source: 'sandbox', target_kind: 'sandbox' }],
  ] as const)('is dropped from %s', (_label, over) => {
    const spec = ToolSpec.parse({ ...base, ...over });
    expect(validateResult(validator, { spec }, returned(ok), credentials).browserDiagnostics).toBeNull();
  });

  it('refuses a result whose diagnostics leave the closed enums (the tool result is malformed)', () => {
    const spec = ToolSpec.parse(base);
    const forged = { ...ok, browser_diagnostics: { ...DIAGNOSTICS, phase: 'pwned' } };
    const validated = validateResult(validator, { spec }, returned(forged), credentials);
    expect(validated.reasonCode).toBe('tool.output_invalid');
    expect(validated.browserDiagnostics ?? null).toBeNull();
    const extra = { ...ok, browser_diagnostics: { ...DIAGNOSTICS, note: 'free text' } };
    expect(validateResult(validator, { spec }, returned(extra), credentials).reasonCode).toBe('tool.output_invalid');
    const huge = { ...ok, browser_diagnostics: { ...DIAGNOSTICS, timings: { total_ms: 10 ** 9, launch_ms: 0, navigation_ms: 0 } } };
    expect(validateResult(validator, { spec }, returned(huge), credentials).reasonCode).toBe('tool.output_invalid');
  });

  it('rides on the completed or failed event, and on no other', async () => {
    const row = {
      id: 'i1',
      runId: 'r1',
      stepNumber: 1,
      callId: 'c1',
      toolName: 'browser.snapshot',
      effectSentAt: null,
    } as unknown as InvocationRow;
    const recorded: NewEvent[][] = [];
    const store = {
      invocations: {
        complete: async (_t: string, _id: string, _f: unknown, _c: unknown, events: readonly NewEvent[]) => {
          recorded.push([...events]);
          return { ...row, status: 'succeeded', result: { content: [], structured: null, trust: 'platform' } };
        },
      },
    } as never;
    const facts = {
      reasonCode: 'tool.ok',
      result: { content: [], structured: null, trust: 'platform' as const },
      error: null,
      outputBytes: 0,
      truncated: false,
      artifactId: null,
      durationMs: 3,
      browserDiagnostics: DIAGNOSTICS,
    };
    for (const status of ['succeeded', 'failed', 'denied', 'uncertain'] as const) {
      await writeTerminal(store, 't1', row, { fence: { runId: 'r1', fencingToken: 1 } }, new Date(), { ...facts, status }).catch(
        () => undefined,
      );
    }
    const payloads = recorded.map((events) => events[0]!.payload);
    expect(payloads.map((p) => p.browser_diagnostics ?? null)).toEqual([DIAGNOSTICS, DIAGNOSTICS, null, null]);
  });
});
