import type { DurableDeps, PipelineDeps } from '@veetbot/executor';
import type { ToolRegistry } from '@veetbot/ports';
import type { RuntimeDeps, RuntimeSettings } from './runtime-deps';
import type { HeldTallies } from './held-tallies';
import type { ActiveRuns, LeaseContext } from './run-lease';
import type { SessionViews } from './session-view';

/** What every runtime operation shares: the deps, resolved settings, and per-process state. */
export interface RuntimeCore {
  readonly deps: RuntimeDeps;
  readonly settings: Readonly<RuntimeSettings>;
  /** The durable pipeline (steps 1–14) this worker runs calls through. */
  readonly pipeline: PipelineDeps & { readonly durable: DurableDeps };
  /** Steps 1–7 only, no hooks: the pre-dispatch dry run (batch-plan.ts). */
  readonly preview: PipelineDeps;
  readonly lease: LeaseContext;
  readonly active: ActiveRuns;
  readonly views: SessionViews;
  /** Sessions whose MCP servers this process has prepared (session-tools.ts). */
  readonly preparedSessions: Set<string>;
  /** Work under way in this process per session (run-teardown.ts): teardown waits for none. */
  readonly sessionsAtWork: Map<string, number>;
  /** The breaker tallies of the runs this process stepped last (held-tallies.ts). */
  readonly tallies: HeldTallies;
}

export interface TenantPipelines {
  readonly registry: ToolRegistry;
  readonly pipeline: PipelineDeps & { readonly durable: DurableDeps };
  readonly preview: PipelineDeps;
}

/** The pipeline deps a tenant's calls run with: the same deps, that tenant's registry. */
export function pipelinesFor(core: RuntimeCore, tenantId: string): TenantPipelines {
  const registries = core.deps.registries;
  if (registries === undefined) return { registry: core.deps.registry, pipeline: core.pipeline, preview: core.preview };
  const registry = registries.forTenant(tenantId);
  return { registry, pipeline: { ...core.pipeline, registry }, preview: { ...core.preview, registry } };
}
