import type { TrustLevel } from '@veetbot/domain';

// The conventions every store follows are in stores.ts.

export interface SkillRow {
  readonly id: string;
  readonly tenantId: string;
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly requiredTools: string[];
  readonly content: string;
  readonly trust: TrustLevel;
  /** Who wrote it: e.g. 'operator', 'user', 'agent'. */
  readonly source: string;
  readonly createdAt: Date;
}

export type NewSkill = Omit<SkillRow, 'id' | 'tenantId'> & { readonly id?: string };

export interface SkillStore {
  /** UNIQUE(tenant_id, name, version): a duplicate is `store.unique_violation`. */
  create(tenantId: string, skill: NewSkill): Promise<SkillRow>;
  /** Without a version: the most recently created version. */
  get(tenantId: string, name: string, version?: string): Promise<SkillRow | null>;
  list(tenantId: string): Promise<SkillRow[]>;
  /** Every version of the name; returns how many rows went. */
  delete(tenantId: string, name: string): Promise<number>;
}
