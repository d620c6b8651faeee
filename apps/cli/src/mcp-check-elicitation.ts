import type { McpElicitation, McpElicitationAnswer, McpElicitationCall, McpElicitationQuestion, McpElicitationValue } from '@veetbot/ports';

/** `--elicitation`: how `mcp check` answers a server's form elicitation for the operator (docs/adr/0060). */
export const ELICITATION_MODES = ['accept-defaults', 'decline'] as const;
export type ElicitationMode = (typeof ELICITATION_MODES)[number];

/** One question a server asked during the check, as the report shows it. */
export interface CheckedElicitation {
  readonly tool_name: string;
  /** The server's words (external text), as the adapter admitted them. */
  readonly message: string;
  readonly fields: readonly string[];
  readonly action: McpElicitationAnswer['action'];
}

/**
 * The operator's answerer: there is nobody to type an answer during a check, so the flag decides.
 * `accept-defaults` accepts with the form's own defaults (SEP-1034) — and declines when a required
 * field has no default, rather than inventing a value the operator never chose; `decline`
 * declines every question. Each question is recorded for the report.
 */
export class OperatorElicitation implements McpElicitation {
  readonly asked: CheckedElicitation[] = [];
  readonly #mode: ElicitationMode;

  constructor(mode: ElicitationMode) {
    this.#mode = mode;
  }

  ask(call: McpElicitationCall, question: McpElicitationQuestion): Promise<McpElicitationAnswer> {
    const answer = this.#answer(question);
    const fields = Object.keys(propertiesOf(question));
    this.asked.push({ tool_name: call.toolName, message: question.message, fields, action: answer.action });
    return Promise.resolve(answer);
  }

  #answer(question: McpElicitationQuestion): McpElicitationAnswer {
    if (this.#mode === 'decline') return { action: 'decline' };
    const properties = propertiesOf(question);
    const content: Record<string, McpElicitationValue> = {};
    for (const [name, field] of Object.entries(properties)) {
      if (field.default !== undefined) content[name] = field.default as McpElicitationValue;
    }
    const required = Array.isArray(question.requestedSchema.required) ? (question.requestedSchema.required as string[]) : [];
    if (required.some((name) => !Object.hasOwn(content, name))) return { action: 'decline' };
    return { action: 'accept', content };
  }
}

function propertiesOf(question: McpElicitationQuestion): Record<string, { default?: unknown }> {
  const properties = question.requestedSchema.properties;
  return typeof properties === 'object' && properties !== null ? (properties as Record<string, { default?: unknown }>) : {};
}
