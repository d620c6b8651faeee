import { randomBytes, randomUUID } from 'node:crypto';
import type {
  CredentialResolver,
  EventRow,
  EventStore,
  McpCatalogGeneration,
  McpCatalogRow,
  McpCatalogStore,
  NewEvent,
  NewSkill,
  SecretValue,
  SkillRow,
  SkillStore,
  TenantCredentialResolvers,
  ToolExecutionContext,
} from '@veetbot/ports';
import { parseCredentialRef, VeetbotError, type CredentialOrigin } from '@veetbot/domain';

/** An EventStore in memory with the port's derivation-key rule (a known key returns the stored event). */
export class MemoryEvents implements EventStore {
  readonly rows: EventRow[] = [];
  async append(tenantId: string, events: readonly NewEvent[]): Promise<EventRow[]> {
    return events.map((e) => {
      const existing = this.rows.find((r) => r.tenantId === tenantId && r.derivationKey === e.derivationKey);
      if (existing) return existing;
      const row: EventRow = {
        id: randomUUID(),
        tenantId,
        runId: e.runId,
        sequence: this.rows.length + 1,
        type: e.type,
        payload: { ...e.payload },
        derivationKey: e.derivationKey,
        createdAt: e.createdAt,
      };
      this.rows.push(row);
      return row;
    });
  }
  async listAfter(tenantId: string, runId: string | null, after: number, limit: number): Promise<EventRow[]> {
    return this.rows.filter((r) => r.tenantId === tenantId && r.runId === runId && r.sequence > after).slice(0, limit);
  }
  ofType(type: string): EventRow[] {
    return this.rows.filter((r) => r.type === type);
  }
}

/**
 * The catalog history port in memory: a generation per hash, withdrawn_at stamped on names that
 * went. recordPreparation writes the generations and appends the events to the events fake it
 * was given, all or nothing; `failPreparations` makes the next that many reject, writing nothing
 * (a transaction that did not commit).
 */
export class MemoryCatalog implements McpCatalogStore {
  readonly rows: McpCatalogRow[] = [];
  recordCalls = 0;
  readonly preparations: { generations: readonly McpCatalogGeneration[]; events: readonly NewEvent[] }[] = [];
  failPreparations = 0;
  constructor(readonly events: MemoryEvents) {}
  async recordGeneration(tenantId: string, g: McpCatalogGeneration): Promise<McpCatalogRow[]> {
    this.recordCalls++;
    return this.#write(tenantId, g);
  }
  async recordPreparation(tenantId: string, generations: readonly McpCatalogGeneration[], events: readonly NewEvent[]): Promise<void> {
    if (this.failPreparations > 0) {
      this.failPreparations--;
      throw new Error('store.connection (scripted): the preparation did not commit');
    }
    this.preparations.push({ generations, events });
    for (const g of generations) this.#write(tenantId, g);
    await this.events.append(tenantId, events);
  }
  #write(tenantId: string, g: McpCatalogGeneration): McpCatalogRow[] {
    const existing = this.rows.filter((r) => r.tenantId === tenantId && r.serverId === g.serverId && r.catalogHash === g.catalogHash);
    if (existing.length > 0) return existing;
    const names = new Set(g.tools.map((t) => t.remoteName));
    this.rows.forEach((r, i) => {
      if (r.tenantId === tenantId && r.serverId === g.serverId && r.withdrawnAt === null && !names.has(r.remoteName))
        this.rows[i] = { ...r, withdrawnAt: g.discoveredAt };
    });
    const rows = g.tools.map((t) => ({
      id: randomUUID(),
      tenantId,
      serverId: g.serverId,
      catalogHash: g.catalogHash,
      remoteName: t.remoteName,
      registryName: t.registryName,
      inputSchema: t.inputSchema,
      discoveredAt: g.discoveredAt,
      withdrawnAt: null,
    }));
    this.rows.push(...rows);
    return rows;
  }
  async getGeneration(tenantId: string, serverId: string, hash: string): Promise<McpCatalogRow[]> {
    return this.rows.filter((r) => r.tenantId === tenantId && r.serverId === serverId && r.catalogHash === hash);
  }
  async latest(tenantId: string, serverId: string): Promise<McpCatalogRow[]> {
    const last = this.rows.filter((r) => r.tenantId === tenantId && r.serverId === serverId).at(-1);
    return last === undefined ? [] : this.getGeneration(tenantId, serverId, last.catalogHash);
  }
}

export class MemorySkills implements SkillStore {
  readonly rows: SkillRow[] = [];
  async create(tenantId: string, skill: NewSkill): Promise<SkillRow> {
    if (this.rows.some((r) => r.tenantId === tenantId && r.name === skill.name && r.version === skill.version))
      throw new Error('store.unique_violation');
    const row: SkillRow = { ...skill, id: skill.id ?? randomUUID(), tenantId };
    this.rows.push(row);
    return row;
  }
  async get(tenantId: string, name: string, version?: string): Promise<SkillRow | null> {
    return (
      this.rows.filter((r) => r.tenantId === tenantId && r.name === name && (version === undefined || r.version === version)).at(-1) ?? null
    );
  }
  async list(tenantId: string): Promise<SkillRow[]> {
    return this.rows.filter((r) => r.tenantId === tenantId);
  }
  async delete(): Promise<number> {
    return 0;
  }
}

const SECRET_VALUES = new WeakMap<SecretValue, string>();

/** The broker's Secret, as far as this package may see it (credential-broker is not in its row). */
export function secret(value: string): SecretValue {
  const made: SecretValue = {
    reveal: () => value,
    equals: (other) => SECRET_VALUES.get(other) === value,
    addTo: (redactor) => redactor.add(value),
    toString: () => '[secret]',
    toJSON: () => '[secret]',
  };
  SECRET_VALUES.set(made, value);
  return made;
}

/**
 * A broker whose values a test can rotate; counts resolutions and records the (tenant, origin)
 * of every server it is asked for. Its resolve runs the CredentialResolver contract
 * (credential-resolver.contract.test.ts, docs/adr/0030), so it refuses as the real broker does.
 * forServer ignores the origin on purpose: which reference kinds an origin may use is the real
 * broker's rule (credential-broker's tests); here `scopes` records what the adapter asked.
 */
export class MutableCredentials implements CredentialResolver, TenantCredentialResolvers {
  readonly values = new Map<string, string>();
  resolutions = 0;
  /** Every (tenant, origin) a connection asked for (ADR 0017: the adapter passes both). */
  readonly scopes: string[] = [];
  forServer(tenantId: string, origin: CredentialOrigin): CredentialResolver {
    this.scopes.push(`${tenantId}/${origin}`);
    return this;
  }
  constructor(initial: Record<string, string> = {}) {
    for (const [k, v] of Object.entries(initial)) this.values.set(k, v);
  }
  async resolve(ref: string): Promise<SecretValue> {
    this.resolutions++;
    // Never echoed: a malformed reference may be a value pasted where a reference belongs.
    if (parseCredentialRef(ref) === null) throw new VeetbotError('credential.invalid_ref', 'Not a credential reference.');
    const value = this.values.get(ref);
    if (value === undefined) throw new VeetbotError('credential.not_found', `No credential for ${ref}.`);
    return secret(value);
  }
}

export function context(overrides: Partial<ToolExecutionContext> & { sessionId: string; tenantId?: string }): ToolExecutionContext {
  const tenantId = overrides.tenantId ?? 'tenant-a';
  return {
    invocationId: randomUUID(),
    callId: 'call-1',
    runId: randomUUID(),
    tenantId,
    principal: { tenant_id: tenantId, principal_id: 'p1', scopes: [] },
    stepNumber: 1,
    attemptNumber: 1,
    // § Idempotency: 64 lowercase hex, as the executor derives it (it goes on the wire; docs/adr/0066).
    idempotencyKey: randomBytes(32).toString('hex'),
    deadlineAt: new Date(Date.now() + 60_000),
    timeoutSeconds: 30,
    maximumOutputBytes: 1024 * 1024,
    target: { kind: 'mcp', serverId: null, deviceId: null },
    workspace: null,
    artifacts: {
      write: async () => {
        throw new Error('no artifacts in these tests');
      },
    },
    credentials: {
      resolve: async () => {
        throw new Error('unused');
      },
    },
    cancellation: new AbortController().signal,
    markEffectSent: async () => undefined,
    ...overrides,
  };
}

export const fixedClock = (start = Date.now()) => {
  let now = start;
  return { now: () => new Date(now), advance: (ms: number) => (now += ms) };
};
