import type { CredentialResolver, SecretValue } from '@veetbot/ports';

const REDACTED = '[redacted credential]';

/**
 * § ToolExecutionContext, credentials: a resolved value never enters a ToolResult and is
 * scrubbed from any string the tool returns. The resolver handed to a tool records every
 * value the tool actually revealed; step 11 replaces those values in what came back.
 */
export class ScrubbingCredentialResolver implements CredentialResolver {
  // ECMAScript private, not TypeScript `private`: this object is handed to the tool, and a
  // TypeScript-private field is an ordinary own property at run time. Through it a tool could
  // reach the unscrubbed broker (resolving values this resolver never sees, so never scrubs)
  // or read the set of revealed values.
  readonly #revealed = new Set<string>();
  readonly #inner: CredentialResolver;

  constructor(inner: CredentialResolver) {
    this.#inner = inner;
  }

  async resolve(credentialRef: string): Promise<SecretValue> {
    const secret = await this.#inner.resolve(credentialRef);
    const seen = this.#revealed;
    return {
      reveal(): string {
        const value = secret.reveal();
        if (value.length > 0) seen.add(value);
        return value;
      },
      toString: () => secret.toString(),
      toJSON: () => secret.toJSON(),
    };
  }

  /** Replace every revealed value in every string of `value`, recursively. */
  scrub<T>(value: T): T {
    if (this.#revealed.size === 0) return value;
    // Longest first, so a secret that contains another is replaced whole.
    const secrets = [...this.#revealed].sort((a, b) => b.length - a.length);
    const scrubString = (s: string): string => secrets.reduce((acc, secret) => acc.split(secret).join(REDACTED), s);
    const walk = (v: unknown): unknown => {
      if (typeof v === 'string') return scrubString(v);
      if (Array.isArray(v)) return v.map(walk);
      if (v !== null && typeof v === 'object') {
        const out: Record<string, unknown> = {};
        for (const [k, inner] of Object.entries(v)) out[scrubString(k)] = walk(inner);
        return out;
      }
      return v;
    };
    return walk(value) as T;
  }
}
