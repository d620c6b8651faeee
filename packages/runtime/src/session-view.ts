import type { SessionView } from '@veetbot/executor';
import type { PinnedToolSet, SessionRow } from '@veetbot/ports';

/** Sessions whose pinned view is kept in memory; a pin never changes, so entries never go stale. */
const CACHE_LIMIT = 1024;

/**
 * § Advertisement is pinned: a session's calls resolve against the set it pinned at open,
 * read back from the session row (tool names, specs, tool_schema_sha256), so a worker that
 * never saw the session open — or a recovery after a restart — resolves exactly what was
 * advertised. The agent filter was applied when the set was pinned, so the view's agent
 * enables everything in the pin and nothing else (step 2 checks pin membership).
 */
export class SessionViews {
  readonly #views = new Map<string, SessionView>();

  of(session: SessionRow): SessionView {
    const key = `${session.tenantId}\0${session.id}`;
    const cached = this.#views.get(key);
    if (cached !== undefined) return cached;
    const pinned: PinnedToolSet = Object.freeze({
      toolSchemaSha256: session.toolSchemaSha256,
      specs: Object.freeze([...session.specs]),
      toolNames: Object.freeze([...session.toolNames]),
    });
    const view: SessionView = { agent: { agentId: session.agentId }, pinned };
    if (this.#views.size >= CACHE_LIMIT) {
      const oldest = this.#views.keys().next();
      if (!oldest.done) this.#views.delete(oldest.value);
    }
    this.#views.set(key, view);
    return view;
  }
}
