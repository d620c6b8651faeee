import { reasonCodeEntry, type RenderedContentPart, type ToolResultItem } from '@veetbot/domain';
import type { GatewayCallResult } from '@veetbot/ports';
import type { CallToolResult } from '@modelcontextprotocol/server';
import { CALL_ID_META, CONTENT_TRUST_META, RESULT_CALL_ID_META, RESULT_INVOCATION_META, RESULT_ITEM_META } from './wire-names';

type Content = CallToolResult['content'][number];

/**
 * One rendered part as MCP content. Text is the pipeline's step-14 text, its trust envelope
 * included (§ What the model reads: external text reaches a model only enveloped), so an MCP
 * client's model reads exactly what a REST caller's model reads. An artifact is named, never
 * inlined: its bytes are behind GET /v1/artifacts/{id}, under the same key.
 */
function contentOf(part: RenderedContentPart): Content {
  if (part.type === 'text') return { type: 'text', text: part.text, _meta: { [CONTENT_TRUST_META]: part.trust } };
  const a = part.artifact;
  return {
    type: 'text',
    text: `[artifact ${a.artifact_id}: ${a.bytes} bytes of ${a.media_type}, sha256 ${a.sha256}; GET /v1/artifacts/${a.artifact_id} returns it]`,
    _meta: { [CONTENT_TRUST_META]: a.trust, 'veetbot/artifact': { ...a } },
  };
}

/**
 * The text of an error outcome that rendered no content (a denial, a failure before the tool
 * ran): the reason code's one fixed message from the domain's table (§ What the model reads),
 * looked up by code so nothing but table text can reach it. MCP clients read `content`, and an
 * error result without text tells them nothing (conformance tools-call-error; docs/adr/0061).
 */
function outcomeText(outcome: ToolResultItem['outcome']): Content {
  const message = reasonCodeEntry(outcome.reason_code)?.message ?? 'The call did not succeed.';
  return { type: 'text', text: message };
}

/**
 * A result with structured content and no text carries the structured content as one JSON
 * text item too, as MCP asks of tools that return structured content (for clients that read
 * only `content`).
 */
function withText(result: CallToolResult): CallToolResult {
  if (result.content.some((c) => c.type === 'text') || result.structuredContent === undefined) return result;
  return { ...result, content: [...result.content, { type: 'text', text: JSON.stringify(result.structuredContent) }] };
}

function notYet(callId: string, text: string, structured: Record<string, unknown>): CallToolResult {
  return {
    // Nothing has run yet: a model must not read this as the tool's result.
    isError: true,
    content: [{ type: 'text', text }],
    structuredContent: structured,
    _meta: { [RESULT_CALL_ID_META]: callId },
  };
}

/**
 * The pipeline's answer as an MCP CallToolResult (docs/adr/0044): `structuredContent` is the
 * six-field outcome and nothing else; `isError` unless it succeeded (failed, denied and
 * uncertain alike); the rest of the ToolResultItem (the tool's structured result, the
 * resolved trust, truncation, the artifact) rides in `_meta`. A call that has not concluded
 * — waiting for approval, suspended, still running — is an error result that says so and
 * names the call id to repeat it with: the repeat returns the recorded outcome.
 */
export function toCallToolResult(result: GatewayCallResult): CallToolResult {
  switch (result.kind) {
    case 'concluded': {
      const { item } = result;
      const failed = item.outcome.status !== 'succeeded';
      const content = item.content.map(contentOf);
      return withText({
        isError: failed,
        content: failed && content.length === 0 ? [outcomeText(item.outcome)] : content,
        structuredContent: { ...item.outcome },
        _meta: {
          [RESULT_CALL_ID_META]: item.call_id,
          [RESULT_INVOCATION_META]: result.invocationId,
          [RESULT_ITEM_META]: {
            tool_name: item.tool_name,
            structured: item.structured,
            trust: item.trust,
            truncated: item.truncated,
            artifact_id: item.artifact_id,
          },
        },
      });
    }
    case 'waiting_for_approval':
      return notYet(
        result.callId,
        `This call needs an approval before it runs; nothing has been done yet. Approval ${result.approvalId ?? '(pending)'} waits for a person holding approvals.decide. Call the tool again with _meta["${CALL_ID_META}"] = "${result.callId}" after the decision to receive its outcome.`,
        { status: 'waiting_for_approval', call_id: result.callId, invocation_id: result.invocationId, approval_id: result.approvalId },
      );
    case 'suspended':
      return notYet(
        result.callId,
        `This call is suspended (${result.suspendedKind}) until it is answered. Call the tool again with _meta["${CALL_ID_META}"] = "${result.callId}" to receive its outcome.`,
        { status: 'suspended', call_id: result.callId, invocation_id: result.invocationId, kind: result.suspendedKind },
      );
    case 'running':
      return notYet(
        result.callId,
        `This call is still running. Call the tool again with _meta["${CALL_ID_META}"] = "${result.callId}" to receive its outcome; it will not run twice.`,
        { status: 'running', call_id: result.callId },
      );
    case 'refused':
      return {
        isError: true,
        content: [{ type: 'text', text: result.message }],
        structuredContent: { status: 'refused', reason_code: result.code, message: result.message },
      };
  }
}
