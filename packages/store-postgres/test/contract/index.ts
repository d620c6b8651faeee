import { apiKeyChangesContract } from './api-key-changes.contract';
import { apiStoresContract } from './api-stores.contract';
import { artifactStoreContract } from './artifact-store.contract';
import { eventStoreContract } from './events.contract';
import type { HarnessFactory } from './harness';
import { hotPathStatementsContract } from './hot-path-statements.contract';
import { invocationStoreContract } from './invocations.contract';
import { mcpCatalogContract } from './mcp-catalog.contract';
import { mcpDelegatedGrantsContract } from './mcp-delegated-grants.contract';
import { mcpPendingConsentsContract } from './mcp-pending-consents.contract';
import { recordStoresContract } from './records.contract';
import { rowLevelSecurityContract } from './rls.contract';
import { runStoreContract } from './runs.contract';
import { schemaContract } from './schema.contract';
import { sqlFunctionsContract } from './sql-functions.contract';
import { stepOpeningContract } from './step-opening.contract';
import { stepQueueContract } from './step-queue.contract';
import { tenantFairClaimsContract } from './tenant-fair-claims.contract';
import { tenantSecretsContract } from './tenant-secrets.contract';

export type { HarnessFactory, StoreHarness } from './harness';

/** The whole repository contract: every driver runs exactly this. */
export function storeContract(get: HarnessFactory): void {
  schemaContract(get);
  sqlFunctionsContract(get);
  invocationStoreContract(get);
  hotPathStatementsContract(get);
  runStoreContract(get);
  eventStoreContract(get);
  rowLevelSecurityContract(get);
  recordStoresContract(get);
  artifactStoreContract(get);
  stepQueueContract(get);
  stepOpeningContract(get);
  tenantFairClaimsContract(get);
  apiStoresContract(get);
  apiKeyChangesContract(get);
  mcpCatalogContract(get);
  tenantSecretsContract(get);
  mcpDelegatedGrantsContract(get);
  mcpPendingConsentsContract(get);
}
