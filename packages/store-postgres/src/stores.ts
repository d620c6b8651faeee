import type { TenantStepQuotas } from '@veetbot/domain';
import type { Stores } from '@veetbot/ports';
import type { Database } from './database';
import { PostgresApprovalStore } from './repositories/approval-store';
import { PostgresArtifactStore } from './repositories/artifact-store';
import { PostgresEventStore } from './repositories/event-store';
import { PostgresInvocationStore } from './repositories/invocation-store';
import { PostgresMcpDelegatedGrantStore } from './repositories/mcp-delegated-grant-store';
import { PostgresMcpPendingConsentStore } from './repositories/mcp-pending-consent-store';
import { PostgresMcpCatalogStore, PostgresMcpServerStore } from './repositories/mcp-store';
import { PostgresReconciliationStore } from './repositories/reconciliation-store';
import { PostgresRunStore } from './repositories/run-store';
import { PostgresSessionStore } from './repositories/session-store';
import { PostgresSkillStore } from './repositories/skill-store';
import { PostgresStepStore } from './repositories/step-store';
import { PostgresApiKeyStore, PostgresTenantStore } from './repositories/tenant-store';
import { PostgresTenantSecretStore } from './repositories/tenant-secret-store';
import { PostgresWorkingStateStore } from './repositories/working-state-store';

/** Every store port on one database; `options.quotas`: the operator's per-tenant step quotas (docs/adr/0070). */
export function createStores(database: Database, options: { readonly quotas?: TenantStepQuotas } = {}): Stores {
  return {
    tenants: new PostgresTenantStore(database),
    apiKeys: new PostgresApiKeyStore(database),
    sessions: new PostgresSessionStore(database),
    runs: new PostgresRunStore(database),
    steps: new PostgresStepStore(database, options.quotas),
    invocations: new PostgresInvocationStore(database),
    approvals: new PostgresApprovalStore(database),
    events: new PostgresEventStore(database),
    artifacts: new PostgresArtifactStore(database),
    skills: new PostgresSkillStore(database),
    mcpServers: new PostgresMcpServerStore(database),
    mcpCatalog: new PostgresMcpCatalogStore(database),
    tenantSecrets: new PostgresTenantSecretStore(database),
    mcpDelegatedGrants: new PostgresMcpDelegatedGrantStore(database),
    mcpPendingConsents: new PostgresMcpPendingConsentStore(database),
    workingStates: new PostgresWorkingStateStore(database),
    reconciliations: new PostgresReconciliationStore(database),
  };
}
