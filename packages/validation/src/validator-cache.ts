import type { ValidatorCacheKey } from './types';

interface Entry<V> {
  readonly id: string;
  readonly toolName: string;
  readonly toolVersion: string;
  /** The schema object last seen for this key: the common, cheap hit. */
  source: object;
  /** Last use, for least-recently-used eviction without reordering the map on every hit. */
  tick: number;
  evicted: boolean;
  /** Its JSON text, compared only when a different object arrives for the same key. */
  readonly fingerprint: string;
  readonly compiled: V;
}

export interface CacheStats {
  readonly compilations: number;
  readonly hits: number;
  readonly size: number;
}

/**
 * Compiled validators by (tool name, tool version), bounded, oldest dropped first. A key is
 * the tool's identity, but a different schema under the same key (a caller bug, or a store
 * that re-reads a spec) recompiles rather than validating against a stale schema: the entry
 * remembers the schema object and, failing identity, its JSON text.
 */
export class ValidatorCache<V> {
  readonly #entries = new Map<string, Entry<V>>();
  /** Identity fast path: the hot loop passes the same frozen schema object every call. */
  readonly #bySchema = new WeakMap<object, Entry<V>>();
  #tick = 0;
  readonly #max: number;
  readonly #compile: (schema: Record<string, unknown>) => V;
  #compilations = 0;
  #hits = 0;

  constructor(options: { max: number; compile: (schema: Record<string, unknown>) => V }) {
    this.#max = options.max;
    this.#compile = options.compile;
  }

  get(key: ValidatorCacheKey, schema: Record<string, unknown>): V {
    const fast = this.#bySchema.get(schema);
    if (fast !== undefined && !fast.evicted && fast.toolName === key.toolName && fast.toolVersion === key.toolVersion) {
      fast.tick = ++this.#tick;
      this.#hits++;
      return fast.compiled;
    }
    // NUL cannot appear in a registry name, so the join is unambiguous.
    const id = `${key.toolName}\u0000${key.toolVersion}`;
    const entry = this.#entries.get(id);
    if (entry !== undefined) {
      if (entry.source === schema || entry.fingerprint === JSON.stringify(schema)) {
        entry.source = schema;
        entry.tick = ++this.#tick;
        this.#bySchema.set(schema, entry);
        this.#hits++;
        return entry.compiled;
      }
      this.#entries.delete(id);
      entry.evicted = true;
    }
    const compiled = this.#compile(schema);
    this.#compilations++;
    const created: Entry<V> = {
      id,
      toolName: key.toolName,
      toolVersion: key.toolVersion,
      source: schema,
      tick: ++this.#tick,
      evicted: false,
      fingerprint: JSON.stringify(schema),
      compiled,
    };
    this.#entries.set(id, created);
    this.#bySchema.set(schema, created);
    while (this.#entries.size > this.#max) this.#evictLeastRecentlyUsed();
    return compiled;
  }

  /** O(size), only when the cache is full and a new key arrives. */
  #evictLeastRecentlyUsed(): void {
    let oldest: Entry<V> | undefined;
    for (const entry of this.#entries.values()) if (oldest === undefined || entry.tick < oldest.tick) oldest = entry;
    if (oldest === undefined) return;
    this.#entries.delete(oldest.id);
    oldest.evicted = true;
  }

  stats(): CacheStats {
    return { compilations: this.#compilations, hits: this.#hits, size: this.#entries.size };
  }
}
