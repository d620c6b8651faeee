import type { ValidatorCacheKey } from './types';

interface Entry<V> {
  /** The schema object last seen for this key: the common, cheap hit. */
  source: object;
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
  readonly #max: number;
  readonly #compile: (schema: Record<string, unknown>) => V;
  readonly #evict: (compiled: V) => void;
  #compilations = 0;
  #hits = 0;

  constructor(options: { max: number; compile: (schema: Record<string, unknown>) => V; evict?: (compiled: V) => void }) {
    this.#max = options.max;
    this.#compile = options.compile;
    this.#evict = options.evict ?? (() => {});
  }

  get(key: ValidatorCacheKey, schema: Record<string, unknown>): V {
    // NUL cannot appear in a registry name, so the join is unambiguous.
    const id = `${key.toolName}\u0000${key.toolVersion}`;
    const entry = this.#entries.get(id);
    if (entry !== undefined) {
      if (entry.source === schema || entry.fingerprint === JSON.stringify(schema)) {
        entry.source = schema;
        // Re-insert so Map order is least-recently-used first.
        this.#entries.delete(id);
        this.#entries.set(id, entry);
        this.#hits++;
        return entry.compiled;
      }
      this.#entries.delete(id);
      this.#evict(entry.compiled);
    }
    const compiled = this.#compile(schema);
    this.#compilations++;
    this.#entries.set(id, { source: schema, fingerprint: JSON.stringify(schema), compiled });
    while (this.#entries.size > this.#max) {
      const oldest = this.#entries.keys().next().value as string;
      const dropped = this.#entries.get(oldest)!;
      this.#entries.delete(oldest);
      this.#evict(dropped.compiled);
    }
    return compiled;
  }

  stats(): CacheStats {
    return { compilations: this.#compilations, hits: this.#hits, size: this.#entries.size };
  }
}
