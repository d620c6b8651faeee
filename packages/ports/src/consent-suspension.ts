/**
 * docs/adr/0082: consent as a run suspension, the executor's side. An MCP call whose server
 * needs a person's consent (the adapter's McpConsentRequiredError, under a configured consent
 * surface) suspends with kind `authorization` instead of failing; the host records the pending
 * consent (the state hashed, the flow sealed) and says when it was answered.
 */
export interface ConsentSuspensionCall {
  readonly tenantId: string;
  readonly principalId: string;
  readonly runId: string;
  readonly invocationId: string;
  /** The call's MCP server (null for a tool that is not one: the host declines it). */
  readonly serverId: string | null;
  readonly at: Date;
}

/** What the run view and the `tool.call.authorization_required` event show: never a token or verifier. */
export interface ConsentSuspended {
  /** The pending consent's id (the row's suspended_ref). */
  readonly id: string;
  readonly authorizationUrl: string;
  readonly serverId: string;
  readonly principalId: string;
}

export interface ConsentSuspensionHost {
  /** A tool failure that asks for a person's consent: the pending consent recorded; null for any other failure. */
  suspend(error: unknown, call: ConsentSuspensionCall): Promise<ConsentSuspended | null>;
  /** Whether the consent was answered (its state used by the callback): the call runs again. */
  answered(tenantId: string, consentId: string): Promise<boolean>;
}
