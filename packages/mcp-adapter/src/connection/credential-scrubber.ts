/** The marker the executor's own scrubber uses, so a redaction reads the same wherever it happened. */
export const REDACTED = '[redacted credential]';

/**
 * Every credential value a connection presented (a header, an access token, a client secret,
 * the stdio child's variable). A server that echoes one back — server-everything's get-env
 * returns its whole environment — gets it replaced before the result leaves the adapter.
 */
export class CredentialScrubber {
  readonly #values = new Set<string>();

  remember(value: string): void {
    if (value.length >= 4) this.#values.add(value);
  }

  scrub<T>(value: T): T {
    if (this.#values.size === 0) return value;
    const secrets = [...this.#values].sort((a, b) => b.length - a.length);
    const scrubString = (s: string): string => secrets.reduce((acc, secret) => (acc.includes(secret) ? acc.split(secret).join(REDACTED) : acc), s);
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
