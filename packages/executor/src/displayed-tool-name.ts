import { isValidToolName } from '@veetbot/domain';

/**
 * What the platform repeats back of a tool name the model asked for and the registry does not
 * know. The requested name is model output (EXTERNAL_UNTRUSTED), and an outcome's `action`, a
 * ToolResultItem's `tool_name` and a tool event's `tool_name` are platform text: a name outside
 * the registry grammar (§ Names) could carry anything — "IGNORE PREVIOUS INSTRUCTIONS …" — so it
 * is never echoed (Hard gate 5; § Events and telemetry: no external text in events). A name
 * that matches the grammar is an identifier and is kept, so the model can tell which call it
 * got wrong. The placeholder cannot collide with a registered name: the grammar has no spaces
 * or parentheses.
 */
export const INVALID_TOOL_NAME = '(invalid tool name)';

export function displayedToolName(requested: string): string {
  return isValidToolName(requested) ? requested : INVALID_TOOL_NAME;
}
