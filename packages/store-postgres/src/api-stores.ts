import { PostgresMcpCatalogHistoryStore } from './repositories/mcp-catalog-history-store';
import type { ApiStores } from '@veetbot/ports';
import type { Database } from './database';
import { PostgresInvocationQueryStore } from './repositories/invocation-query-store';
import { PostgresMcpServerAdminStore } from './repositories/mcp-server-admin-store';
import { PostgresReviewStore } from './repositories/review-store';
import { PostgresStepSubmissionStore } from './repositories/step-submission-store';

/** The api's own stores (ports/api-stores.ts) on one database. */
export function createApiStores(database: Database): ApiStores {
  return {
    invocationQueries: new PostgresInvocationQueryStore(database),
    mcpCatalogHistory: new PostgresMcpCatalogHistoryStore(database),
    reviews: new PostgresReviewStore(database),
    mcpServerAdmin: new PostgresMcpServerAdminStore(database),
    stepSubmissions: new PostgresStepSubmissionStore(database),
  };
}
