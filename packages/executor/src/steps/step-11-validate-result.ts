import { checkJsonValue, describeJsonPath, withoutHostPaths } from '@veetbot/domain';
import {
  clampTrust,
  failureKindOfReasonCode,
  isKnownReasonCode,
  ToolFailureKind,
  ToolResult,
  ToolUnavailableError,
  type BrowserDiagnostics,
  type ContentPart,
  type ToolFailure,
  type TrustLevel,
} from '@veetbot/domain';
import type { SchemaValidator } from '@veetbot/ports';
import type { TerminalInvocationStatus } from '@veetbot/ports';
import type { AuthorizedCall } from '../pipeline-result';
import type { ScrubbingCredentialResolver } from '../credential-scrubber';
import type { Execution } from './step-10-execute';

/** What step 11 concluded about an executed (or unstartable) call. */
export interface ValidatedResult {
  readonly status: Exclude<TerminalInvocationStatus, 'denied'>;
  readonly reasonCode: string;
  /** What the model may read: the tool's content, or the external text of its failure as data. */
  readonly content: ContentPart[];
  readonly structured: Record<string, unknown> | null;
  /** The resolved trust of `content`. */
  readonly trust: TrustLevel;
  /** The failure as recorded on the row (operator-facing detail, verbatim external text). */
  readonly failure: ToolFailure | null;
  readonly evidenceKey: string | null;
  /** ADR-0158: kept only from a builtin browser tool (trustedBrowserDiagnostics). */
  readonly browserDiagnostics?: BrowserDiagnostics | null;
  readonly effectSent: boolean;
  readonly durationMs: number | null;
}

/**
 * ADR-0158: browser_diagnostics is trusted execution's, so only a builtin on the
 * browser_provider target may carry it to its terminal event; from any other tool (an MCP
 * server, a device, a sandbox tool) it is dropped, whatever the tool returned (docs/adr/0079).
 */
function trustedBrowserDiagnostics(call: Pick<AuthorizedCall, 'spec'>, result: ToolResult): BrowserDiagnostics | null {
  return call.spec.source === 'builtin' && call.spec.target_kind === 'browser_provider' ? result.browser_diagnostics : null;
}

/** The ToolFailureKind recorded for a pipeline-made failure. */
function kindOf(reasonCode: string): ToolFailureKind {
  const family = failureKindOfReasonCode(reasonCode);
  if (family !== undefined) return family;
  const bare = ToolFailureKind.safeParse(reasonCode.slice('tool.'.length));
  if (reasonCode.startsWith('tool.') && bare.success) return bare.data;
  if (reasonCode === 'tool.effect_guard_failed' || reasonCode === 'tool.run_cancelled') return 'internal';
  return reasonCode.startsWith('tool.server_') ||
    reasonCode.startsWith('tool.auth_') ||
    reasonCode === 'tool.withdrawn' ||
    reasonCode === 'tool.device_offline'
    ? 'transport'
    : 'internal';
}

function failed(
  reasonCode: string,
  effectSent: boolean,
  durationMs: number | null,
  detail: string,
  status: 'failed' | 'uncertain' = 'failed',
): ValidatedResult {
  const kind = kindOf(reasonCode);
  return {
    status,
    reasonCode,
    content: [],
    structured: null,
    trust: 'platform',
    failure: { kind, reason_code: reasonCode, detail, retryable: false, external_text: null },
    evidenceKey: null,
    effectSent,
    durationMs,
  };
}

/**
 * After the watermark, a non-idempotent call that did not report a definite result may have
 * had its effect: UNCERTAIN, never a failure the model might retry (§ The effect watermark).
 */
function ambiguous(call: Pick<AuthorizedCall, 'spec'>, effectSent: boolean): boolean {
  return effectSent && call.spec.idempotency === 'non_idempotent';
}

/**
 * Step 11: validate the result — shape, output_schema, trust. Never retries and never
 * rewrites an executed call into something more convenient: a result that fails its own
 * schema is FAILED tool.output_invalid and still recorded as executed. Credential values the
 * tool revealed are scrubbed from everything it returned.
 */
export function validateResult(
  validator: SchemaValidator,
  call: Pick<AuthorizedCall, 'spec'>,
  execution: Exclude<Execution, { kind: 'suspended' }>,
  credentials: ScrubbingCredentialResolver,
): ValidatedResult {
  switch (execution.kind) {
    case 'not_started':
      return failed(execution.reasonCode, false, null, 'The tool was not started.');
    case 'timed_out':
      return ambiguous(call, execution.effectSent)
        ? failed('tool.outcome_unknown', true, execution.durationMs, 'Timed out after the effect watermark.', 'uncertain')
        : failed('tool.timeout', execution.effectSent, execution.durationMs, 'Timed out.');
    case 'threw': {
      if (ToolUnavailableError.isInstance(execution.error)) {
        // No route (§ Advertisement is pinned). After dispatch of a non-idempotent call whose
        // watermark is set, an unreachable server says nothing about the effect: UNCERTAIN.
        const e = execution.error;
        return ambiguous(call, execution.effectSent) && e.dispatched
          ? failed('tool.outcome_unknown', true, execution.durationMs, credentials.scrub(e.detail), 'uncertain')
          : failed(e.code, execution.effectSent, execution.durationMs, credentials.scrub(e.detail));
      }
      // A thrown error's text is foreign: no host path reaches the tenant's row (docs/adr/0058).
      const detail = credentials.scrub(
        execution.error instanceof Error
          ? withoutHostPaths(`${execution.error.name}: ${execution.error.message}`)
          : 'A non-error value was thrown.',
      );
      return ambiguous(call, execution.effectSent)
        ? failed('tool.outcome_unknown', true, execution.durationMs, detail, 'uncertain')
        : failed('tool.internal', execution.effectSent, execution.durationMs, detail);
    }
    case 'returned':
      break;
  }
  const { effectSent, durationMs } = execution;
  const parsed = ToolResult.safeParse(credentials.scrubResult(execution.value));
  if (!parsed.success) {
    return failed(
      'tool.output_invalid',
      effectSent,
      durationMs,
      `The tool returned a malformed ToolResult at ${parsed.error.issues[0]?.path.join('.') || '(root)'}.`,
    );
  }
  const result = parsed.data;
  // ADR 0019: the row stores what the tool returned as jsonb, which cannot hold a NUL or a lone
  // surrogate, and nothing may walk nesting past the limit. A remote server (or a file read as
  // text) can return either: the tool ran and its result cannot be read — FAILED
  // tool.output_invalid, recorded as executed, never a store error that leaves the row RUNNING.
  const unreadable = checkJsonValue(result, { undefinedIsAbsent: true });
  if (unreadable !== null) {
    const at = unreadable.path.length === 0 ? '(root)' : describeJsonPath(unreadable.path);
    return failed(
      'tool.output_invalid',
      effectSent,
      durationMs,
      `The tool returned a result that cannot be stored, at ${at} (${unreadable.code}).`,
    );
  }
  const trust = clampTrust(call.spec.output_trust, result.output_trust);
  if (!result.ok) {
    const f = result.failure!;
    // A tool's code must be its own kind's family or a table code; anything else is its kind's.
    const reasonCode = isKnownReasonCode(f.reason_code) ? f.reason_code : `tool.${f.kind}`;
    const status = f.kind === 'outcome_unknown' || reasonCode === 'tool.outcome_unknown' ? 'uncertain' : 'failed';
    return {
      status,
      reasonCode,
      // § What the model reads: external text is data, enveloped as EXTERNAL_UNTRUSTED; it never
      // reaches `message` (Hard gate 5).
      content: f.external_text === null || f.external_text === '' ? [] : [{ type: 'text', text: f.external_text }],
      structured: null,
      trust: 'external_untrusted',
      failure: f,
      evidenceKey: null,
      browserDiagnostics: status === 'failed' ? trustedBrowserDiagnostics(call, result) : null,
      effectSent,
      durationMs,
    };
  }
  if (call.spec.output_schema !== null) {
    const check = validator.validateOutput(
      { toolName: call.spec.name, toolVersion: call.spec.version },
      call.spec.output_schema,
      result.structured ?? {},
    );
    if (!check.valid) {
      return failed(
        'tool.output_invalid',
        effectSent,
        durationMs,
        `structured failed output_schema at ${check.violation.schemaPath} (${check.violation.keyword}).`,
      );
    }
  }
  // § What the model reads: external data is readable only inside an envelope. Structured
  // data from an EXTERNAL_UNTRUSTED source (an MCP server's structuredContent) never appears as
  // a bare field. MCP servers mirror it as a JSON text block, so when the content carries text
  // the structured copy is dropped; otherwise it becomes one JSON text part, enveloped and
  // size-limited with the rest.
  const externalStructured = trust === 'external_untrusted' && result.structured !== null;
  const hasText = result.content.some((part) => part.type === 'text');
  return {
    status: 'succeeded',
    reasonCode: 'tool.ok',
    content:
      externalStructured && !hasText ? [...result.content, { type: 'text', text: JSON.stringify(result.structured) }] : result.content,
    structured: externalStructured ? null : result.structured,
    trust,
    failure: null,
    evidenceKey: result.evidence_key,
    browserDiagnostics: trustedBrowserDiagnostics(call, result),
    effectSent,
    durationMs,
  };
}
