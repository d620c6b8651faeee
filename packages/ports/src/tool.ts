import type { WorkspaceFiles } from './workspaces';
import type {
  ArtifactRef,
  CredentialOrigin,
  Principal,
  SecretRedactor,
  TargetKind,
  ToolResultInput,
  ToolSpec,
  TrustLevel,
} from '@veetbot/domain';

/**
 * A resolved secret. Its string and JSON forms never show the value. § Authentication: the
 * value is revealed "in exactly two places — building a header and building a child
 * environment — both inside adapters.mcp" (a tool of its own that needs it is a third, outside
 * the product's code); everything else the product does with a secret — compare it, scrub it
 * from a result — the secret does itself (docs/adr/0018).
 */
export interface SecretValue {
  reveal(): string;
  /** The same value, byte for byte (the re-authentication ladder's step 3), without revealing either. */
  equals(other: SecretValue): boolean;
  /** Teach `redactor` this value and its encoded forms; the caller never sees them. */
  addTo(redactor: SecretRedactor): void;
  toString(): string;
  toJSON(): string;
}

/** § ToolExecutionContext: credentials is a resolver, not a dictionary. */
export interface CredentialResolver {
  /** Resolve a credential_ref (`env:NAME`, `file:/path`) to a short-lived SecretValue. */
  resolve(credentialRef: string): Promise<SecretValue>;
}

/**
 * ADR 0017: the resolver for one server's references, chosen by who configured the server and
 * for which tenant — carried through this port, never looked up process-wide. A tenant's
 * server resolves only `secret:NAME` of that tenant; an operator's server only `env:`/`file:`.
 */
export interface TenantCredentialResolvers {
  forServer(tenantId: string, origin: CredentialOrigin): CredentialResolver;
}

export interface ArtifactWriteRequest {
  readonly bytes: Uint8Array;
  readonly mediaType: string;
  /** Inherits the result's trust label; never above the tool's output_trust. */
  readonly trust: TrustLevel;
}

/** § ToolExecutionContext: a writer scoped to the run, not the full ArtifactStore. */
export interface ArtifactWriter {
  write(request: ArtifactWriteRequest): Promise<ArtifactRef>;
}

/** ExecutionTarget: where a call runs. */
interface ExecutionTarget {
  readonly kind: TargetKind;
  readonly serverId: string | null;
  readonly deviceId: string | null;
}

/**
 * The run's workspace (docs/adr/0058). `root` is the host folder, for the sandbox port only (it
 * is bound at /workspace); never shown to a tenant. Tools touch the workspace's files through
 * `files` alone: host code never follows a name inside a tree a tenant can write.
 */
export interface WorkspaceHandle {
  readonly root: string;
  readonly files: WorkspaceFiles;
}

/**
 * § ToolExecutionContext, exactly as specified and nothing more: no database session, no
 * repository, no policy engine, no registry, and no way to reach another tool.
 */
export interface ToolExecutionContext {
  readonly invocationId: string;
  readonly callId: string;
  readonly runId: string;
  readonly sessionId: string;
  readonly tenantId: string;
  readonly principal: Principal;
  readonly stepNumber: number;
  readonly attemptNumber: number;
  readonly idempotencyKey: string;
  /** Already min'd with the run deadline. */
  readonly deadlineAt: Date;
  /** The effective timeout, never ToolSpec.timeout_seconds. */
  readonly timeoutSeconds: number;
  readonly maximumOutputBytes: number;
  readonly target: ExecutionTarget;
  readonly workspace: WorkspaceHandle | null;
  readonly artifacts: ArtifactWriter;
  readonly credentials: CredentialResolver;
  /** The cancellation token (RULINGS.md "Naming": an AbortSignal). */
  readonly cancellation: AbortSignal;
  /** § The effect watermark: its own short commit; later calls are no-ops. */
  markEffectSent(): Promise<void>;
}

/**
 * What the route a tool is served over imposes on every call, declared by the adapter that
 * registers it (§ MCP: a server's request_timeout_seconds). Not a ToolSpec field: it is
 * transport configuration, not what the model is shown, and it never changes a spec's
 * version. The executor folds it into the one effective timeout (§ ToolExecutionContext:
 * "the executor does that once, in one place"; docs/adr/0025); a tool never applies it itself.
 */
export interface ToolCallLimits {
  /** § MCP: request_timeout_seconds, "per call, capped by the tool". */
  readonly requestTimeoutSeconds?: number;
}

/** § Ports: the central port. Section 7's, plus the route's call limits (docs/adr/0025). */
export interface Tool {
  readonly spec: ToolSpec;
  readonly limits?: ToolCallLimits;
  /**
   * `orchestration`: step 10 hands the call to the runtime's OrchestrationHost instead of
   * `execute` (sandbox.run_orchestration; docs/adr/0039). Set only by the runtime's own entry.
   */
  readonly hostedBy?: 'orchestration';
  execute(args: Record<string, unknown>, context: ToolExecutionContext): Promise<ToolResultInput>;
}
