import type {
  ApprovalStore,
  ArtifactWriterFactory,
  ConsentSuspensionHost,
  ControlToolHost,
  CredentialResolver,
  InvocationStore,
  LeaseFence,
  OrchestrationHost,
  RunStore,
  WorkspaceHandle,
} from '@veetbot/ports';

/** What steps 8–14 need beyond steps 1–7: persistence and the execution context's parts. */
export interface DurableDeps {
  readonly invocations: InvocationStore;
  readonly runs: RunStore;
  readonly approvals: ApprovalStore;
  readonly artifacts: ArtifactWriterFactory;
  readonly credentials: CredentialResolver;
  /** This process's lease owner name (the worker id). */
  readonly owner: string;
  /**
   * Idempotency keys this process is executing right now. A second submission of a key that is
   * in flight here is a ConcurrencyConflict, never a second claim (§ Deduplication, rule 3).
   */
  readonly inFlight: Set<string>;
  readonly outputs: OutputSettings;
  /** § Recovery: a call that crashed its worker this many times ends FAILED. Default 5. */
  readonly maximumAttempts: number;
  /**
   * A call the run leaves fewer seconds than this cannot finish and is refused before dispatch
   * with run.deadline_exceeded (§ ToolExecutionContext; docs/adr/0025). Default 1.
   */
  readonly minimumCallSeconds?: number;
  /**
   * § Control tools: the runtime, which executes every ToolKind CONTROL call step 10 reaches.
   * Absent: a control call fails at step 10 (a pipeline composed without a runtime).
   */
  readonly control?: ControlToolHost;
  /**
   * § The programmatic orchestration bridge: the runtime, which runs every call whose Tool is
   * `hostedBy: 'orchestration'` (docs/adr/0039). Absent: such a call fails at step 10.
   */
  readonly orchestration?: OrchestrationHost;
  /**
   * docs/adr/0082: where an MCP call that needs a person's consent suspends (kind
   * `authorization`). Absent: such a call fails `tool.auth_unsupported` as before (hard gate 24).
   */
  readonly consents?: ConsentSuspensionHost;
}

export interface OutputSettings {
  /** output.inline_maximum_bytes: shipped 4,096, operator minimum 1,024 (§ Output). */
  readonly inlineMaximumBytes: number;
}

/** The run a call executes in, as the worker holding its lease sees it. */
export interface RunContext {
  readonly fence: LeaseFence;
  /** The run deadline: every call's effective deadline is min'd with it. */
  readonly deadlineAt: Date;
  /** A caller's own limit on this call, when it set one. */
  readonly callerTimeoutSeconds?: number;
  /** Shared by one parallel batch; null for a sequential call. */
  readonly parallelGroup: string | null;
  readonly workspace: WorkspaceHandle | null;
  /** Run cancellation. */
  readonly signal?: AbortSignal;
}
