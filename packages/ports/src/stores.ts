import type { ApiKeyStore } from './api-key-store';
import type { ApprovalStore } from './approval-store';
import type { ArtifactStore } from './artifact-store';
import type { EventStore } from './event-store';
import type { InvocationStore } from './invocation-store';
import type { McpCatalogStore } from './mcp-catalog-store';
import type { McpDelegatedGrantStore } from './mcp-delegated-grant-store';
import type { McpPendingConsentStore } from './mcp-pending-consent-store';
import type { McpServerStore } from './mcp-server-store';
import type { ReconciliationStore } from './reconciler';
import type { RunStore } from './run-store';
import type { SessionStore } from './session-store';
import type { SkillStore } from './skill-store';
import type { StepStore } from './step-store';
import type { TenantSecretStore } from './tenant-secret-store';
import type { TenantStore } from './tenant-store';
import type { WorkingStateStore } from './working-state-store';

/*
 * The persistence ports (ARCHITECTURE.md "Data"). Row types use camelCase fields; each maps
 * one-to-one onto a snake_case column of the same name (`effectSentAt` is effect_sent_at).
 *
 * Conventions shared by every store:
 * - The first argument is the tenant. Every tenant operation runs with row-level security
 *   for that tenant only; another tenant's rows are invisible (a lookup returns null, never
 *   "forbidden"), so a caller cannot even learn that they exist.
 * - Times are supplied by the caller (ports.Clock), never read from the database clock, so
 *   tests and recovery reason about one clock.
 * - Failures are StoreError values from @veetbot/domain with a stable code: FencingError
 *   (`store.fenced`), InvalidTransitionError (`store.invalid_transition`), `store.not_found`,
 *   `store.serialization` (retryable), `store.cancelled`, `store.connection` (retryable), ...
 * - `events` arguments are committed in the same transaction as the row change they describe;
 *   if the change fails, no event is written.
 */

/** Every store of one database. */
export interface Stores {
  readonly tenants: TenantStore;
  readonly apiKeys: ApiKeyStore;
  readonly sessions: SessionStore;
  readonly runs: RunStore;
  readonly steps: StepStore;
  readonly invocations: InvocationStore;
  readonly approvals: ApprovalStore;
  readonly events: EventStore;
  readonly artifacts: ArtifactStore;
  readonly skills: SkillStore;
  readonly mcpServers: McpServerStore;
  readonly mcpCatalog: McpCatalogStore;
  readonly tenantSecrets: TenantSecretStore;
  /** docs/adr/0080: per-principal delegated MCP grants, sealed like tenant secrets. */
  readonly mcpDelegatedGrants: McpDelegatedGrantStore;
  /** docs/adr/0082: MCP calls suspended for a person's consent (the state hashed, the flow sealed). */
  readonly mcpPendingConsents: McpPendingConsentStore;
  readonly workingStates: WorkingStateStore;
  /** docs/adr/0063: the sweep's reconciliation attempts on UNCERTAIN rows. */
  readonly reconciliations: ReconciliationStore;
}
