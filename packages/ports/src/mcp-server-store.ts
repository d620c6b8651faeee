import type { IdempotencyClass, RiskLevel, SideEffectClass } from '@veetbot/domain';

// MCP servers (§ Schema additions).
// The conventions every store follows are in stores.ts.

export type McpTransport = 'stdio' | 'http';
export type McpAuthScheme = 'none' | 'bearer' | 'header' | 'oauth2_client' | 'env';

export interface McpServerRow {
  readonly id: string;
  readonly tenantId: string;
  readonly serverId: string;
  readonly transport: McpTransport;
  readonly endpoint: string;
  readonly authScheme: McpAuthScheme;
  readonly authName: string | null;
  /** A broker reference, never a secret. */
  readonly credentialRef: string | null;
  readonly tokenEndpoint: string | null;
  readonly tokenScopes: string[] | null;
  readonly sideEffect: SideEffectClass;
  readonly risk: RiskLevel;
  readonly idempotency: IdempotencyClass;
  readonly requiredScopes: string[];
  readonly timeoutSeconds: number;
  readonly maximumOutputBytes: number;
  readonly enabled: boolean;
  readonly createdAt: Date;
}

export type NewMcpServer = Omit<McpServerRow, 'id' | 'tenantId' | 'enabled'> & { readonly id?: string; readonly enabled?: boolean };

export interface McpServerStore {
  /** UNIQUE(tenant_id, server_id): a duplicate is `store.unique_violation`. */
  create(tenantId: string, server: NewMcpServer): Promise<McpServerRow>;
  get(tenantId: string, serverId: string): Promise<McpServerRow | null>;
  list(tenantId: string): Promise<McpServerRow[]>;
  setEnabled(tenantId: string, serverId: string, enabled: boolean): Promise<McpServerRow>;
}
