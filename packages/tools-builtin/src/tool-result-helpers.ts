import type { ToolFailureKind, ToolResultInput } from '@veetbot/domain';

/**
 * § ToolResult, and what a tool is allowed to return: exactly two shapes. These helpers are
 * the only way a builtin builds either, so no builtin can return a status, a message, or
 * more than the specification allows.
 */

/** A success: the text the model reads, and the structured part output_schema validates. */
export function toolSuccess(text: string, structured: Record<string, unknown>): ToolResultInput {
  return { ok: true, content: [{ type: 'text', text }], structured };
}

export interface FailureOptions {
  readonly retryable?: boolean;
}

/**
 * A failure with reason_code `tool.{kind}.{detail}` (§ ToolResult: "stable"). `detail` is
 * operator-facing and never sent onward, so it may name paths and positions; there is no
 * external_text because a builtin quotes no third party.
 */
export function toolFailure(kind: ToolFailureKind, reasonDetail: string, detail: string, options: FailureOptions = {}): ToolResultInput {
  return {
    ok: false,
    content: [],
    failure: {
      kind,
      reason_code: `tool.${kind}.${reasonDetail}`,
      detail,
      retryable: options.retryable ?? false,
      external_text: null,
    },
  };
}

/** § ToolExecutionContext: `workspace` is nullable; a workspace tool without one cannot run. */
export const NO_WORKSPACE = (): ToolResultInput =>
  toolFailure('internal', 'no_workspace', 'This invocation has no workspace (context.workspace is null).');

/** The code of a Node.js system error, if it has one. */
export function errnoCode(error: unknown): string | undefined {
  if (typeof error === 'object' && error !== null && 'code' in error) {
    const code = (error as { code: unknown }).code;
    return typeof code === 'string' ? code : undefined;
  }
  return undefined;
}
