import { type ToolResultInput, toolFailure } from '@veetbot/domain';

/**
 * § ToolResult, and what a tool is allowed to return: exactly two shapes. These helpers are
 * the only way a builtin builds either, so no builtin can return a status, a message, or
 * more than the specification allows.
 */

/** A success: the text the model reads, and the structured part output_schema validates. */
export function toolSuccess(text: string, structured: Record<string, unknown>): ToolResultInput {
  return { ok: true, content: [{ type: 'text', text }], structured };
}

// The failure builder is the domain's (one for the builtins and the runtime's hosted tools).
export { toolFailure };

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
