import type { ApiKeyChangeFeed, ApiKeyChangeWatcher } from '@veetbot/ports';
import { notificationRecord } from './wake-ups';

/**
 * The channel api_keys' trigger notifies (sql/functions/veetbot_api_key_changed.sql,
 * migrations/0027): every update or delete of a key's row, in the transaction that makes it, so
 * no path that revokes, deletes or rewrites a key can forget to tell the api processes
 * (docs/adr/0075). Payload `{"key_id": …}`; a TRUNCATE sends `{}` (every key).
 */
export const API_KEYS_CHANNEL = 'veetbot_api_keys';

/** A uuid as PostgreSQL prints one; anything else on the channel means "any key". */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The key a notification names, or null: anything else (a TRUNCATE, a stray NOTIFY) is read as every key. */
export function decodeApiKeyChange(payload: string): string | null {
  const keyId = notificationRecord(payload)?.key_id;
  return typeof keyId === 'string' && UUID.test(keyId) ? keyId : null;
}

/**
 * The api key changes heard on the process's one listening connection (step-queue.ts).
 * `listening` follows the connection: false from its loss until LISTEN is in effect again.
 */
export class ApiKeyChanges implements ApiKeyChangeFeed {
  readonly #watchers = new Set<ApiKeyChangeWatcher>();
  #listening: boolean;

  constructor(listening: boolean) {
    this.#listening = listening;
  }

  get listening(): boolean {
    return this.#listening;
  }

  watch(watcher: ApiKeyChangeWatcher): () => void {
    this.#watchers.add(watcher);
    return () => {
      this.#watchers.delete(watcher);
    };
  }

  /** A notification on API_KEYS_CHANNEL arrived (from this process or another). */
  deliver(payload: string): void {
    const keyId = decodeApiKeyChange(payload);
    for (const watcher of this.#watchers) watcher.changed(keyId);
  }

  /** The listening connection went down (false) or LISTEN is in effect again (true). */
  setListening(up: boolean): void {
    this.#listening = up;
    for (const watcher of this.#watchers) watcher.listening(up);
  }
}
