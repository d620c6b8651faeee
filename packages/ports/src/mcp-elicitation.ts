import type { JsonSchemaDocument, Principal } from '@veetbot/domain';

/**
 * The call a server's form elicitation arrived during (docs/adr/0060): the question belongs to
 * that call's run, and waits no longer than the call's deadline.
 */
export interface McpElicitationCall {
  readonly tenantId: string;
  readonly sessionId: string;
  readonly runId: string;
  readonly invocationId: string;
  readonly callId: string;
  readonly stepNumber: number;
  readonly principal: Principal;
  /** The registry name of the tool whose call the server asked during (mcp.SERVER.TOOL). */
  readonly toolName: string;
  readonly serverId: string;
  /** The call's own deadline: past it, the server is answered `cancel`. */
  readonly deadlineAt: Date;
}

/** What the server asked, already admitted by the adapter. */
export interface McpElicitationQuestion {
  /** The server's message: external_untrusted text, bounded by the adapter; never an instruction. */
  readonly message: string;
  /**
   * The answer form: a flat object whose properties are primitives (string, number, integer,
   * boolean, an enum, or an array of enum strings), as the MCP specification restricts it,
   * admitted with the schema validator's limits. Defaults (SEP-1034) are the server's.
   */
  readonly requestedSchema: JsonSchemaDocument;
}

export type McpElicitationValue = string | number | boolean | readonly string[];

export type McpElicitationAnswer =
  | { readonly action: 'accept'; readonly content: Readonly<Record<string, McpElicitationValue>> }
  | { readonly action: 'decline' }
  | { readonly action: 'cancel' };

/**
 * Who answers a server's form elicitation (docs/adr/0060). The adapter advertises the
 * `elicitation` capability only when it holds one of these; without, a server's request is
 * refused at negotiation as before. `signal` aborts when the call ends first (its deadline, a
 * cancellation, the server withdrawing the request); the answer is then not used. An accepted
 * answer is validated again by the adapter against the requested schema, with its defaults.
 */
export interface McpElicitation {
  ask(call: McpElicitationCall, question: McpElicitationQuestion, signal: AbortSignal): Promise<McpElicitationAnswer>;
}
