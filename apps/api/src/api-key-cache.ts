import type { Principal } from '@veetbot/domain';
import type { ApiKeyChangeFeed, ApiKeyRow, ApiKeyStore } from '@veetbot/ports';

/** What a key's hash names: an active key's principal, a revoked key, or nothing. */
export type KeyCheck =
  | { readonly status: 'active'; readonly principal: Principal }
  | { readonly status: 'revoked' }
  | { readonly status: 'unknown' };

export interface ApiKeyCacheOptions {
  /** Keys held at most; the least recently used goes first. Default 10 000. */
  readonly maximumEntries?: number;
  /**
   * How long a checked key is served before it is read again, in ms. Default 60 000. The bound
   * for what no notification reports: a listening connection that died without the socket
   * saying so, a change made with the trigger disabled.
   */
  readonly ttlMs?: number;
  /** Milliseconds, monotonic enough for the TTL (tests pass their own). Default performance.now. */
  readonly now?: () => number;
}

interface Entry {
  readonly keyId: string;
  readonly principal: Principal;
  readonly expiresAt: number;
}

export const DEFAULT_API_KEY_CACHE_ENTRIES = 10_000;
export const DEFAULT_API_KEY_CACHE_TTL_MS = 60_000;

/** The principal a stored key row names. */
export function keyCheckOf(row: ApiKeyRow | null): KeyCheck {
  if (row === null) return { status: 'unknown' };
  if (row.revokedAt !== null) return { status: 'revoked' };
  return { status: 'active', principal: { tenant_id: row.tenantId, principal_id: row.principalId, scopes: [...row.scopes] } };
}

/**
 * The api process's cache of checked keys (docs/adr/0075): a key's sha256 → the principal of
 * an ACTIVE key, so a request does not read api_keys again. Never the key itself, never a
 * revoked or unknown hash (a stream of made-up keys costs lookups, not cache room, and a key
 * created a moment ago is never refused from memory).
 *
 * A key is forgotten when the database says its row changed (api_keys' trigger notifies in the
 * revoking transaction; the process's listener hears it: within a second in every api process).
 * While the listening connection is down nothing is served from memory and nothing is stored:
 * the cache is cleared when the loss is seen and bypassed until LISTEN is in effect again. A
 * lookup that was under way when anything changed (a notification, the loss, the return) does
 * not store what it read: it may have read the row before the change committed.
 */
export class ApiKeyCache {
  readonly #store: Pick<ApiKeyStore, 'findByHash'>;
  readonly #entries = new Map<string, Entry>();
  readonly #maximumEntries: number;
  readonly #ttlMs: number;
  readonly #now: () => number;
  readonly #unwatch: () => void;
  #listening: boolean;
  /** Bumped by every change heard and every change of `listening`: a lookup stores only if it did not move. */
  #epoch = 0;

  constructor(store: Pick<ApiKeyStore, 'findByHash'>, changes: ApiKeyChangeFeed, options: ApiKeyCacheOptions = {}) {
    this.#store = store;
    this.#maximumEntries = Math.max(0, Math.floor(options.maximumEntries ?? DEFAULT_API_KEY_CACHE_ENTRIES));
    this.#ttlMs = Math.max(0, options.ttlMs ?? DEFAULT_API_KEY_CACHE_TTL_MS);
    this.#now = options.now ?? (() => performance.now());
    this.#listening = changes.listening;
    this.#unwatch = changes.watch({
      changed: (keyId) => {
        this.#epoch += 1;
        if (keyId === null) this.#entries.clear();
        else for (const [hash, entry] of this.#entries) if (entry.keyId === keyId) this.#entries.delete(hash);
      },
      listening: (up) => {
        this.#epoch += 1;
        this.#listening = up;
        this.#entries.clear();
      },
    });
  }

  /** The key whose sha256 is `keyHash`: from memory when held, else from the store. */
  async check(keyHash: string): Promise<KeyCheck> {
    const held = this.#listening ? this.#entries.get(keyHash) : undefined;
    if (held !== undefined) {
      if (held.expiresAt > this.#now()) {
        // Most recently used last: the eviction takes the first.
        this.#entries.delete(keyHash);
        this.#entries.set(keyHash, held);
        return { status: 'active', principal: copy(held.principal) };
      }
      this.#entries.delete(keyHash);
    }
    const epoch = this.#epoch;
    const startedAt = this.#now();
    const row = await this.#store.findByHash(keyHash);
    const check = keyCheckOf(row);
    if (row !== null && check.status === 'active' && this.#listening && this.#epoch === epoch && this.#maximumEntries > 0) {
      this.#entries.set(keyHash, { keyId: row.id, principal: copy(check.principal), expiresAt: startedAt + this.#ttlMs });
      while (this.#entries.size > this.#maximumEntries) {
        const oldest = this.#entries.keys().next();
        if (oldest.done === true) break;
        this.#entries.delete(oldest.value);
      }
    }
    return check;
  }

  /** Keys held now (tests). */
  get size(): number {
    return this.#entries.size;
  }

  /** Whether a lookup may be answered from memory now (tests; false while the listener is down). */
  get serving(): boolean {
    return this.#listening;
  }

  /** Stop hearing changes and forget everything (the process is stopping). */
  close(): void {
    this.#unwatch();
    this.#listening = false;
    this.#epoch += 1;
    this.#entries.clear();
  }
}

function copy(principal: Principal): Principal {
  return { tenant_id: principal.tenant_id, principal_id: principal.principal_id, scopes: [...principal.scopes] };
}
