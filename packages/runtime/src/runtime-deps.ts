import { ConfigurationError, DEFAULT_BATCH_CONCURRENCY } from '@veetbot/domain';
import type { PipelineHooks } from '@veetbot/executor';
import type {
  ArtifactWriterFactory,
  ConsentSuspensionHost,
  Clock,
  CredentialResolver,
  McpClientPort,
  OrchestrationSandbox,
  PolicyEngine,
  Reconcilers,
  SchemaValidator,
  Stores,
  TenantToolRegistries,
  ToolMetrics,
  ToolRegistry,
  WorkspaceProvider,
} from '@veetbot/ports';

export interface RuntimeDeps {
  /** The registry when one serves every tenant (a single-tenant process, tests). */
  readonly registry: ToolRegistry;
  /**
   * Per-tenant registries (builtins plus that tenant's dynamic tools). When given, every
   * tenant-scoped operation resolves through `forTenant`, and `registry` is unused for calls.
   */
  readonly registries?: TenantToolRegistries;
  readonly validator: SchemaValidator;
  readonly policy: PolicyEngine;
  readonly clock: Clock;
  readonly stores: Stores;
  readonly artifacts: ArtifactWriterFactory;
  readonly credentials: CredentialResolver;
  /** This worker's lease owner id. Unique per process: two processes sharing one fence each other out. */
  readonly owner: string;
  /** Each run's workspace (`<root>/<tenant-hash>/<run_id>`); the runtime never touches the file system. */
  readonly workspaces: WorkspaceProvider;
  readonly hooks?: PipelineHooks;
  readonly settings?: Partial<RuntimeSettings>;
  /**
   * § MCP discovery at session open: when composed, openSession asks it to prepare the
   * session's servers (connect, tools/list, map) and registers what they offer as `mcp`
   * dynamic tools before the pin is taken.
   */
  readonly mcp?: McpClientPort;
  /** § Spans and metrics: handed to the durable pipeline, which records each concluded call once. */
  readonly metrics?: ToolMetrics;
  /**
   * § The programmatic orchestration bridge (docs/adr/0039): bridge turns in the sandbox, for
   * sandbox.run_orchestration. Composed only where a sandbox can run (with the tool itself).
   */
  readonly orchestration?: OrchestrationSandbox;
  /**
   * docs/adr/0082: where an MCP call that needs a person's consent suspends (kind
   * `authorization`). Composed only where the whole consent surface is (a public api URL, the
   * sealed store); absent, such a call fails tool.auth_unsupported as before.
   */
  readonly consents?: ConsentSuspensionHost;
  /**
   * docs/adr/0063: the tools' reconcilers. When composed, the recovery sweep offers each
   * unreviewed UNCERTAIN row of a tool that has one to it, and records a definite answer as the
   * row's review. Without it UNCERTAIN rows wait for a person, as before.
   */
  readonly reconcilers?: Reconcilers;
}

export interface RuntimeSettings {
  /** The run lease's time to live; renewed every third of it while a batch runs. */
  leaseTtlMs: number;
  /** § Parallel calls: concurrency within a parallel batch; exceeding it queues. */
  batchConcurrency: number;
  /** § Recovery: a call that crashes its worker this many times ends FAILED (tool.recovery_exhausted). */
  maximumAttempts: number;
  /** § Output: output.inline_maximum_bytes, shipped 4,096, operator minimum 1,024. */
  inlineMaximumBytes: number;
  /** Rows the recovery sweep examines per pass. */
  sweepBatchSize: number;
  /**
   * § Approvals inside a script: how long a bridge call blocks on its approval before the
   * sandbox is torn down and the orchestration suspends (approval_hold_seconds, default 300).
   */
  approvalHoldSeconds: number;
  /** § Budget accounting: calls one orchestration turn may make (default 64; also the run budget's remainder). */
  bridgeMaximumCalls: number;
  /**
   * § Control tools, delegate.run (docs/adr/0050): how many ancestors a run may have — a run at
   * this depth may not delegate (tool.permission.delegation_depth). Default 3.
   */
  maximumDelegationDepth: number;
  /** docs/adr/0063: reconciliation attempts on one UNCERTAIN row that throw or time out before it is left to a person. */
  reconcileMaximumAttempts: number;
  /** The wait after the first failed attempt; doubled after each further one. */
  reconcileBackoffMs: number;
  /** One attempt's time limit: a lookup still running then is a failed attempt. */
  reconcileTimeoutMs: number;
}

export const DEFAULT_RUNTIME_SETTINGS: Readonly<RuntimeSettings> = Object.freeze({
  leaseTtlMs: 30_000,
  batchConcurrency: DEFAULT_BATCH_CONCURRENCY,
  maximumAttempts: 5,
  inlineMaximumBytes: 4096,
  sweepBatchSize: 100,
  approvalHoldSeconds: 300,
  bridgeMaximumCalls: 64,
  maximumDelegationDepth: 3,
  reconcileMaximumAttempts: 5,
  reconcileBackoffMs: 30_000,
  reconcileTimeoutMs: 10_000,
});

/** § Output: "operator minimum 1,024". */
export const MINIMUM_INLINE_BYTES = 1024;

/** Defaults filled in and every value checked: a bad setting is a startup error, never a clamp. */
export function resolveRuntimeSettings(partial: Partial<RuntimeSettings> = {}): Readonly<RuntimeSettings> {
  const settings: RuntimeSettings = { ...DEFAULT_RUNTIME_SETTINGS, ...stripUndefined(partial) };
  const positive = (name: keyof RuntimeSettings, minimum = 1) => {
    const value = settings[name];
    if (!Number.isSafeInteger(value) || value < minimum) {
      throw new ConfigurationError('config.runtime_settings_invalid', `Runtime setting ${name} must be an integer of at least ${minimum}.`);
    }
  };
  positive('leaseTtlMs', 3);
  positive('batchConcurrency');
  positive('maximumAttempts');
  positive('inlineMaximumBytes', MINIMUM_INLINE_BYTES);
  positive('sweepBatchSize');
  positive('approvalHoldSeconds', 0);
  positive('bridgeMaximumCalls');
  positive('maximumDelegationDepth', 0);
  positive('reconcileMaximumAttempts');
  positive('reconcileBackoffMs', 0);
  positive('reconcileTimeoutMs');
  return Object.freeze(settings);
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
