import type { BrowserFailure, ToolResultInput } from '@veetbot/domain';
import type { BrowserBlockedRequest, BrowserOperation, BrowserPageView, BrowserProvider, Tool, ToolExecutionContext } from '@veetbot/ports';
import { toolFailure } from '../tool-result-helpers';
import {
  browserClickSpec,
  browserCloseSpec,
  browserOpenSpec,
  browserScreenshotSpec,
  browserSelectSpec,
  browserSnapshotSpec,
  browserTypeSpec,
} from './browser-specs';

/** The stable reason code of each provider failure (docs/adr/0079; the table in domain). */
const REASON: Record<Exclude<BrowserFailure, 'none'>, [Parameters<typeof toolFailure>[0], string, boolean]> = {
  url_refused: ['invalid_arguments', 'browser_url_refused', false],
  destination_refused: ['permission', 'browser_egress_refused', false],
  left_allowed_schemes: ['permission', 'browser_scheme_refused', false],
  navigation_timeout: ['timeout', 'browser_navigation', true],
  navigation_failed: ['upstream_error', 'browser_navigation', true],
  no_session: ['invalid_arguments', 'browser_not_open', false],
  element_not_found: ['not_found', 'browser_element', false],
  element_not_actionable: ['invalid_arguments', 'browser_element_not_actionable', false],
  action_timeout: ['timeout', 'browser_action', true],
  capacity_exhausted: ['internal', 'browser_capacity', true],
  launch_failed: ['internal', 'browser_start', false],
  browser_closed: ['internal', 'browser_closed', false],
  cancelled: ['internal', 'cancelled', false],
  internal: ['internal', 'browser', false],
};

function blockedLines(blocked: readonly BrowserBlockedRequest[], truncated: boolean): string {
  if (blocked.length === 0) return '';
  const lines = blocked.map((b) => `- ${b.destination} (${b.code})`);
  return `Blocked by the egress policy${truncated ? ' (more were blocked; list cut)' : ''}:\n${lines.join('\n')}\n`;
}

function failureOf<T>(operation: Extract<BrowserOperation<T>, { ok: false }>): ToolResultInput {
  const [kind, detail, retryable] = REASON[operation.failure];
  const failed = toolFailure(kind, detail, operation.detail, retryable);
  // What the proxy refused is page-chosen text: data for the model, never the message.
  const blocked = blockedLines(operation.blocked, false);
  return {
    ...failed,
    failure: { ...failed.failure!, external_text: blocked === '' ? null : blocked },
    browser_diagnostics: operation.diagnostics,
  };
}

function pageResult(operation: BrowserOperation<BrowserPageView>): ToolResultInput {
  if (!operation.ok) return failureOf(operation);
  const page = operation.value;
  const text =
    `URL: ${page.url}\nTitle: ${page.title}\n${blockedLines(page.blocked, page.blockedTruncated)}` +
    `Snapshot${page.snapshotTruncated ? ' (truncated to its bound)' : ''}:\n${page.snapshot}`;
  return {
    ok: true,
    content: [{ type: 'text', text }],
    structured: {
      url: page.url.slice(0, 8_192),
      title: page.title,
      snapshot_truncated: page.snapshotTruncated,
      blocked: page.blocked,
      blocked_truncated: page.blockedTruncated,
    },
    output_trust: 'external_untrusted',
    // § New evidence: the platform's digest of the page, for the breaker; never model-visible.
    evidence_key: page.evidenceKey,
    browser_diagnostics: operation.diagnostics,
  };
}

const keyOf = (ctx: ToolExecutionContext) => ({ tenantId: ctx.tenantId, runId: ctx.runId });
const boundsOf = (ctx: ToolExecutionContext) => ({ deadlineAt: ctx.deadlineAt, signal: ctx.cancellation });

/** The browser tools over a provider (docs/adr/0079); built only when the operator enables one. */
export function createBrowserTools(provider: BrowserProvider): Tool[] {
  return [
    {
      spec: browserOpenSpec,
      execute: async (args, ctx) => pageResult(await provider.open(keyOf(ctx), String(args.url), boundsOf(ctx))),
    },
    {
      spec: browserSnapshotSpec,
      execute: async (_args, ctx) => pageResult(await provider.snapshot(keyOf(ctx), boundsOf(ctx))),
    },
    {
      spec: browserClickSpec,
      async execute(args, ctx) {
        // § The effect watermark: the click may reach the site.
        await ctx.markEffectSent();
        return pageResult(await provider.act(keyOf(ctx), { kind: 'click', ref: String(args.ref) }, boundsOf(ctx)));
      },
    },
    {
      spec: browserTypeSpec,
      async execute(args, ctx) {
        await ctx.markEffectSent();
        const action = { kind: 'type', ref: String(args.ref), text: String(args.text), submit: args.submit === true } as const;
        return pageResult(await provider.act(keyOf(ctx), action, boundsOf(ctx)));
      },
    },
    {
      spec: browserSelectSpec,
      async execute(args, ctx) {
        await ctx.markEffectSent();
        const values = Array.isArray(args.values) ? args.values.map(String) : [];
        return pageResult(await provider.act(keyOf(ctx), { kind: 'select', ref: String(args.ref), values }, boundsOf(ctx)));
      },
    },
    {
      spec: browserScreenshotSpec,
      async execute(_args, ctx) {
        const shot = await provider.screenshot(keyOf(ctx), boundsOf(ctx));
        if (!shot.ok) return failureOf(shot);
        const artifact = await ctx.artifacts.write({ bytes: shot.value.png, mediaType: 'image/png', trust: 'external_untrusted' });
        return {
          ok: true,
          content: [
            { type: 'text', text: `Screenshot of ${shot.value.url} (${artifact.bytes} bytes, PNG).` },
            { type: 'artifact', artifact },
          ],
          structured: { url: shot.value.url.slice(0, 8_192), bytes: artifact.bytes },
          artifacts: [artifact],
          output_trust: 'external_untrusted',
          browser_diagnostics: shot.diagnostics,
        };
      },
    },
    {
      spec: browserCloseSpec,
      async execute(_args, ctx) {
        const closed = await provider.close(keyOf(ctx));
        if (!closed.ok) return failureOf(closed);
        return {
          ok: true,
          content: [{ type: 'text', text: closed.value.closed ? "The run's browser is closed." : 'No browser was open.' }],
          structured: { closed: closed.value.closed },
          output_trust: 'external_untrusted',
          browser_diagnostics: closed.diagnostics,
        };
      },
    },
  ];
}
