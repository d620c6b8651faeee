import type { DurableDeps, PipelineDeps } from '@veetbot/executor';
import type { RuntimeDeps, RuntimeSettings } from './runtime-deps';
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
}
