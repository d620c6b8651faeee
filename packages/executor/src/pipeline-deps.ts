import type { AgentSpec, Clock, PinnedToolSet, PolicyEngine, SchemaValidator, ToolMetrics, ToolRegistry } from '@veetbot/ports';
import type { PipelineHooks } from './pipeline-step';
import type { DurableDeps } from './durable-deps';

export interface PipelineLimits {
  /**
   * Canonical arguments larger than this are refused as invalid arguments before policy:
   * arguments are persisted on the row and hashed on every call (docs/adr/0004).
   */
  readonly maximumArgumentBytes: number;
}

export const DEFAULT_PIPELINE_LIMITS: PipelineLimits = { maximumArgumentBytes: 1024 * 1024 };

/** What the one pipeline function needs: ports only, never an adapter (§ Ports). */
export interface PipelineDeps {
  readonly registry: ToolRegistry;
  readonly validator: SchemaValidator;
  readonly policy: PolicyEngine;
  readonly clock: Clock;
  readonly limits?: PipelineLimits;
  readonly hooks?: PipelineHooks;
  /** Steps 8–14. Without it the pipeline only dry-runs. */
  readonly durable?: DurableDeps;
  /** § Spans and metrics: recorded once per concluded call; dry runs and replays record nothing. */
  readonly metrics?: ToolMetrics;
}

/** The session a call belongs to: the agent and the pinned set it advertised. */
export interface SessionView {
  readonly agent: AgentSpec;
  /** Null only for calls outside a session (the CLI's dry run without `--session`). */
  readonly pinned: PinnedToolSet | null;
}
