import { isKnownReasonCode, reasonCodeEntry, ToolResult, type BrowserDiagnostics } from '@veetbot/domain';
import type { BrowserOperation, BrowserPageView, BrowserProvider } from '@veetbot/ports';
import { describe, expect, it } from 'vitest';
import { BROWSER_TOOL_NAMES, BUILTIN_TOOL_NAMES, createBuiltinTools } from '../src/builtin-tools';
import { createFakeContext } from './fake-context';

// The tools over a scripted provider (a unit test: the real provider's tests run chromium in
// packages/browser-provider). What is held here: registration, classification, result shapes,
// reason codes, the watermark before a write, and where evidence and diagnostics go.
const DIAGNOSTICS: BrowserDiagnostics = {
  version: 1,
  phase: 'snapshot',
  outcome: 'succeeded',
  failure: 'none',
  placement: 'isolated_sandbox',
  timings: { total_ms: 5, launch_ms: 0, navigation_ms: 2 },
  truncated: false,
};
const PAGE: BrowserPageView = {
  url: 'https://example.com/',
  title: 'Example',
  snapshot: '- heading "Example" [level=1] [ref=e2]',
  snapshotTruncated: false,
  evidenceKey: 'a'.repeat(64),
  blocked: [{ destination: '169.254.169.254', code: 'egress.address_refused' }],
  blockedTruncated: false,
};

function scripted(answer: BrowserOperation<BrowserPageView>, log: string[] = []): BrowserProvider {
  return {
    open: async (_k, url) => {
      log.push(`open ${url}`);
      return answer;
    },
    snapshot: async () => {
      log.push('snapshot');
      return answer;
    },
    act: async (_k, action) => {
      log.push(`act ${action.kind} ${action.ref}`);
      return answer;
    },
    screenshot: async () => ({ ok: true, value: { png: new Uint8Array([0x89, 0x50]), url: PAGE.url }, diagnostics: DIAGNOSTICS }),
    close: async () => ({ ok: true, value: { closed: true }, diagnostics: { ...DIAGNOSTICS, phase: 'close' } }),
    closeAll: async () => undefined,
  };
}

const okPage: BrowserOperation<BrowserPageView> = { ok: true, value: PAGE, diagnostics: DIAGNOSTICS };

describe('the browser tools', () => {
  it('exist only when the operator enables a provider, appended last', () => {
    expect(createBuiltinTools().some((t) => t.spec.name.startsWith('browser.'))).toBe(false);
    const names = createBuiltinTools({ browser: scripted(okPage) }).map((t) => t.spec.name);
    expect(names.slice(0, BUILTIN_TOOL_NAMES.length)).toEqual([...BUILTIN_TOOL_NAMES]);
    expect(names.slice(-BROWSER_TOOL_NAMES.length)).toEqual([...BROWSER_TOOL_NAMES]);
  });

  it.each([
    ['browser.open', 'network_read', 'low', 'read_only', 'browser.read'],
    ['browser.snapshot', 'network_read', 'low', 'read_only', 'browser.read'],
    ['browser.screenshot', 'network_read', 'low', 'read_only', 'browser.read'],
    ['browser.close', 'none', 'low', 'idempotent', 'browser.read'],
    ['browser.click', 'external_write', 'medium', 'non_idempotent', 'browser.write'],
    ['browser.type', 'external_write', 'medium', 'non_idempotent', 'browser.write'],
    ['browser.select', 'external_write', 'medium', 'non_idempotent', 'browser.write'],
  ] as const)('%s is %s / %s / %s on browser_provider, untrusted output, scope %s', (name, sideEffect, risk, idempotency, scope) => {
    const spec = createBuiltinTools({ browser: scripted(okPage) }).find((t) => t.spec.name === name)!.spec;
    expect(spec).toMatchObject({
      side_effect: sideEffect,
      risk,
      idempotency,
      target_kind: 'browser_provider',
      source: 'builtin',
      output_trust: 'external_untrusted',
      allow_parallel: false,
      required_scopes: [scope],
    });
  });

  it('returns the page with its evidence key and diagnostics beside the content, never in it', async () => {
    const tool = createBuiltinTools({ browser: scripted(okPage) }).find((t) => t.spec.name === 'browser.open')!;
    const result = ToolResult.parse(await tool.execute({ url: 'https://example.com/' }, createFakeContext().context));
    expect(result.ok).toBe(true);
    expect(result.evidence_key).toBe(PAGE.evidenceKey);
    expect(result.browser_diagnostics).toEqual(DIAGNOSTICS);
    const text = result.content.map((p) => (p.type === 'text' ? p.text : '')).join('');
    expect(text).toContain('[ref=e2]');
    expect(text).toContain('169.254.169.254 (egress.address_refused)');
    expect(text).not.toContain(PAGE.evidenceKey);
    expect(text).not.toContain('isolated_sandbox');
  });

  it('marks the effect sent before a write reaches the page', async () => {
    const log: string[] = [];
    const fake = createFakeContext({ onMarkEffectSent: () => void log.push('watermark') });
    const tools = createBuiltinTools({ browser: scripted(okPage, log) });
    await tools.find((t) => t.spec.name === 'browser.click')!.execute({ ref: 'e2' }, fake.context);
    await tools.find((t) => t.spec.name === 'browser.type')!.execute({ ref: 'e3', text: 'x' }, fake.context);
    await tools.find((t) => t.spec.name === 'browser.select')!.execute({ ref: 'e4', values: ['a'] }, fake.context);
    await tools.find((t) => t.spec.name === 'browser.snapshot')!.execute({}, fake.context);
    expect(log).toEqual(['watermark', 'act click e2', 'watermark', 'act type e3', 'watermark', 'act select e4', 'snapshot']);
  });

  it.each([
    ['url_refused', 'tool.invalid_arguments.browser_url_refused'],
    ['destination_refused', 'tool.permission.browser_egress_refused'],
    ['left_allowed_schemes', 'tool.permission.browser_scheme_refused'],
    ['navigation_timeout', 'tool.timeout.browser_navigation'],
    ['navigation_failed', 'tool.upstream_error.browser_navigation'],
    ['no_session', 'tool.invalid_arguments.browser_not_open'],
    ['element_not_found', 'tool.not_found.browser_element'],
    ['element_not_actionable', 'tool.invalid_arguments.browser_element_not_actionable'],
    ['action_timeout', 'tool.timeout.browser_action'],
    ['capacity_exhausted', 'tool.internal.browser_capacity'],
    ['launch_failed', 'tool.internal.browser_start'],
  ] as const)('a provider failure %s is the stable %s, its blocked list data', async (failure, code) => {
    const failed: BrowserOperation<BrowserPageView> = {
      ok: false,
      failure,
      detail: 'platform detail',
      blocked: [{ destination: '10.0.0.1', code: 'egress.address_refused' }],
      diagnostics: { ...DIAGNOSTICS, outcome: 'failed', failure },
    };
    const tool = createBuiltinTools({ browser: scripted(failed) }).find((t) => t.spec.name === 'browser.open')!;
    const result = ToolResult.parse(await tool.execute({ url: 'https://example.com/' }, createFakeContext().context));
    expect(result.failure?.reason_code).toBe(code);
    expect(reasonCodeEntry(code)).toBeDefined();
    expect(isKnownReasonCode(code) || reasonCodeEntry(code) !== undefined).toBe(true);
    expect(result.failure?.external_text).toContain('10.0.0.1 (egress.address_refused)');
    expect(result.browser_diagnostics?.failure).toBe(failure);
  });
});
