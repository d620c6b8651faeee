import { SecretRedactor } from '@veetbot/domain';
import type { CredentialResolver, SecretValue } from '@veetbot/ports';

/**
 * § ToolExecutionContext, credentials: a resolved value never enters a ToolResult and is
 * scrubbed from any string the tool returns. The resolver handed to a tool teaches its redactor
 * every secret the tool resolves (the secret does it: nothing here reveals a value); step 11
 * redacts every form of those values from what came back, with the same SecretRedactor the MCP
 * adapter uses (docs/adr/0018).
 */
export class ScrubbingCredentialResolver implements CredentialResolver {
  // ECMAScript private, not TypeScript `private`: this object is handed to the tool, and a
  // TypeScript-private field is an ordinary own property at run time. Through it a tool could
  // reach the unscrubbed broker (resolving values this resolver never sees, so never scrubs).
  readonly #redactor = new SecretRedactor();
  readonly #inner: CredentialResolver;

  constructor(inner: CredentialResolver) {
    this.#inner = inner;
  }

  async resolve(credentialRef: string): Promise<SecretValue> {
    const secret = await this.#inner.resolve(credentialRef);
    secret.addTo(this.#redactor);
    return secret;
  }

  /** Every form of every resolved value, in every string and key of `value`. */
  scrub<T>(value: T): T {
    return this.#redactor.redact(value);
  }

  /** A tool's result: scrub, and its text items read as one (a secret split across two; docs/adr/0053). */
  scrubResult<T>(value: T): T {
    return this.#redactor.redactResult(value);
  }
}
