import { canonicalJson } from '@veetbot/domain';
import type { NewEvent } from '@veetbot/ports';
import type { ConfiguredServer } from '../config/server-directory';
import { DEFAULT_ADAPTER_SETTINGS, type McpAdapterDeps, type McpAdapterSettings } from './adapter-settings';
import type { RawDiscovery } from './discovery';
import type { EventScope } from './mcp-events';
import { Semaphore } from './semaphore';
import type { ServerSession, SessionState } from './session-state';

/**
 * What the adapter's parts share within one process: the dependencies, the settings, ADR-0131's
 * discovery memory and preparation slots, the work still in flight (which shutdown waits for),
 * and whether the adapter is shut down.
 */
export class AdapterState {
  readonly deps: McpAdapterDeps;
  readonly settings: McpAdapterSettings;
  /** ADR-0131: the last live discovery per whole server configuration. */
  readonly memory = new Map<string, { readonly raw: RawDiscovery; readonly at: number }>();
  readonly slots: Semaphore;
  readonly stdioSlots: Semaphore;
  readonly preparations = new Set<Promise<unknown>>();
  readonly background = new Set<Promise<unknown>>();
  readonly stopping = new AbortController();
  shutDown = false;

  constructor(deps: McpAdapterDeps) {
    this.deps = deps;
    this.settings = { ...DEFAULT_ADAPTER_SETTINGS, ...(deps.settings ?? {}) };
    this.slots = new Semaphore(this.settings.preparationSlots);
    this.stdioSlots = new Semaphore(this.settings.stdioStartupSlots);
  }

  track<T>(set: Set<Promise<unknown>>, work: Promise<T>): Promise<T> {
    set.add(work);
    const forget = () => set.delete(work);
    work.then(forget, forget);
    return work;
  }

  /** Events outside a preparation (calls, drops, the ladder): recorded, never allowed to fail the call. */
  emit(tenantId: string, events: readonly NewEvent[]): void {
    this.track(
      this.background,
      this.deps.events.append(tenantId, events).catch(() => undefined),
    );
  }

  scope(session: SessionState, server: ServerSession): EventScope {
    return { sessionId: session.sessionId, serverId: server.config.serverId, at: this.deps.clock.now() };
  }

  /**
   * ADR-0131: "keyed by the whole configuration". An operator's server is the same server, with
   * the same operator credential, for every tenant: its discovery is one memory that every
   * tenant's session may pin (and that the start-up warm-up fills). A tenant's server is dialled
   * with that tenant's secret and is that tenant's business: its memory is the tenant's alone,
   * even when two tenants configure byte-identical rows (docs/adr/0024).
   */
  memoryKey(tenantId: string, config: ConfiguredServer): string {
    return config.origin === 'operator'
      ? `operator\u0000${canonicalJson(config)}`
      : `tenant\u0000${tenantId}\u0000${canonicalJson(config)}`;
  }
}
