import type { ToolSpec } from '@veetbot/domain';

// The conventions every store follows are in stores.ts.

export type SessionStatus = 'open' | 'closed';

/** The pinned plan (RULINGS.md "Context engine"): tool_names, specs, tool_schema_sha256. */
export interface SessionRow {
  readonly id: string;
  readonly tenantId: string;
  readonly principalId: string;
  readonly agentId: string;
  readonly toolNames: string[];
  readonly specs: ToolSpec[];
  readonly toolSchemaSha256: string;
  /** Pinned tools advertised by a one-line entry of the deferred tool index (tool.call reaches them). */
  readonly deferredToolNames: string[];
  readonly status: SessionStatus;
  readonly createdAt: Date;
  readonly closedAt: Date | null;
}

export interface NewSession {
  readonly id?: string;
  readonly principalId: string;
  readonly agentId: string;
  readonly toolNames: readonly string[];
  readonly specs: readonly ToolSpec[];
  readonly toolSchemaSha256: string;
  /** A subset of toolNames; none when absent. */
  readonly deferredToolNames?: readonly string[];
  readonly createdAt: Date;
}

export interface SessionStore {
  create(tenantId: string, session: NewSession): Promise<SessionRow>;
  get(tenantId: string, sessionId: string): Promise<SessionRow | null>;
  /** Idempotent: closing a closed session returns it unchanged. */
  close(tenantId: string, sessionId: string, at: Date): Promise<SessionRow>;
  /**
   * § MCP, the idle sweep: what became of sessions this process holds transports or
   * registrations for, whoever changed them — across tenants, in one statement, identity and
   * status only (docs/adr/0024). A session with no row (deleted, or never created) is absent
   * from the answer.
   */
  lifecycle(sessions: readonly SessionRef[]): Promise<SessionLifecycle[]>;
}

export interface SessionRef {
  readonly tenantId: string;
  readonly sessionId: string;
}

export interface SessionLifecycle extends SessionRef {
  readonly status: SessionStatus;
  /** Runs the session has had, whatever their status. */
  readonly runs: number;
  /**
   * Runs still at work: `running`, with no call waiting for an approval and no suspended call
   * (§ Control tools). A session whose runs all ended or suspended has had its run teardown.
   */
  readonly workingRuns: number;
}
