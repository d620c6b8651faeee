import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StoreError } from '@veetbot/domain';
import { type SQL, sql } from 'drizzle-orm';
import { describe, expect, it } from 'vitest';
import { migrate, MIGRATIONS_FOLDER } from '../../src/migrate';
import { type HarnessFactory, intent, newScene, rowsOf, type StoreHarness } from './harness';
import { mcpServer } from './rls.contract';

type Column = readonly [name: string, type: string, nullable: 'YES' | 'NO', defaultValue: string | null];

const UUID = 'uuid';
const TEXT = 'text';
const INT = 'integer';
const BIGINT = 'bigint';
const BOOL = 'boolean';
const JSONB = 'jsonb';
const TSTZ = 'timestamp with time zone';

/** Section 15's base, then § Schema additions, exactly: types, NULL-ness, defaults. */
const TOOL_INVOCATIONS: readonly Column[] = [
  ['id', UUID, 'NO', 'gen_random_uuid()'],
  ['tenant_id', TEXT, 'NO', null],
  ['run_id', UUID, 'NO', null],
  ['session_id', UUID, 'NO', null],
  ['step_number', INT, 'NO', null],
  ['call_id', TEXT, 'NO', null],
  ['tool_name', TEXT, 'NO', null],
  ['tool_version', TEXT, 'NO', null],
  ['status', TEXT, 'NO', null],
  ['idempotency_key', TEXT, 'NO', null],
  ['arguments_hash', TEXT, 'NO', null],
  ['arguments', JSONB, 'NO', null],
  ['result', JSONB, 'YES', null],
  ['error', JSONB, 'YES', null],
  ['created_at', TSTZ, 'NO', null],
  ['started_at', TSTZ, 'YES', null],
  ['finished_at', TSTZ, 'YES', null],
  ['tool_source', TEXT, 'NO', "'builtin'::text"],
  ['server_id', TEXT, 'YES', null],
  ['idempotency_class', TEXT, 'NO', null],
  ['effect_sent_at', TSTZ, 'YES', null],
  ['attempt_number', INT, 'NO', '1'],
  ['suspended_kind', TEXT, 'YES', null],
  ['suspended_ref', TEXT, 'YES', null],
  ['output_bytes', BIGINT, 'YES', null],
  ['truncated', BOOL, 'NO', 'false'],
  ['artifact_id', UUID, 'YES', null],
  ['outcome_status', TEXT, 'YES', null],
  ['reason_code', TEXT, 'YES', null],
  ['origin_trust', TEXT, 'NO', null],
  ['parallel_group', UUID, 'YES', null],
  // docs/adr/0047 (migration 0020): the policy that decided step 6.
  ['policy_version', TEXT, 'YES', null],
  ['policy_rule_id', TEXT, 'YES', null],
];

const MCP_SERVERS: readonly Column[] = [
  ['id', UUID, 'NO', 'gen_random_uuid()'],
  ['tenant_id', TEXT, 'NO', null],
  ['server_id', TEXT, 'NO', null],
  ['transport', TEXT, 'NO', null],
  ['endpoint', TEXT, 'NO', null],
  ['auth_scheme', TEXT, 'NO', null],
  ['auth_name', TEXT, 'YES', null],
  ['credential_ref', TEXT, 'YES', null],
  ['token_endpoint', TEXT, 'YES', null],
  ['token_scopes', JSONB, 'YES', null],
  ['side_effect', TEXT, 'NO', null],
  ['risk', TEXT, 'NO', null],
  ['idempotency', TEXT, 'NO', null],
  ['required_scopes', JSONB, 'NO', null],
  ['timeout_seconds', INT, 'NO', null],
  ['maximum_output_bytes', BIGINT, 'NO', null],
  ['enabled', BOOL, 'NO', 'true'],
  ['created_at', TSTZ, 'NO', null],
];

const MCP_TOOL_CATALOG: readonly Column[] = [
  ['id', UUID, 'NO', 'gen_random_uuid()'],
  ['tenant_id', TEXT, 'NO', null],
  ['server_id', TEXT, 'NO', null],
  ['catalog_hash', TEXT, 'NO', null],
  ['remote_name', TEXT, 'NO', null],
  ['registry_name', TEXT, 'NO', null],
  ['input_schema', JSONB, 'NO', null],
  ['discovered_at', TSTZ, 'NO', null],
  ['withdrawn_at', TSTZ, 'YES', null],
];

const TENANT_TABLES = [
  'api_keys',
  'sessions',
  'runs',
  'steps',
  'tool_invocations',
  'approvals',
  'events',
  'event_streams',
  'artifacts',
  'mcp_servers',
  'mcp_tool_catalog',
  'skills',
  'invocation_reviews',
  'tenant_secrets',
  'mcp_delegated_grants',
  'mcp_pending_consents',
  'invocation_reconciliations',
  'run_breaker_evidence',
];

async function owner<T extends Record<string, unknown>>(h: StoreHarness, query: SQL): Promise<T[]> {
  const result = await h.database.transaction({ role: 'owner' }, (tx) => tx.execute(query));
  return rowsOf(result) as T[];
}

async function columnsOf(h: StoreHarness, table: string): Promise<Column[]> {
  const rows = await owner<{ column_name: string; data_type: string; is_nullable: 'YES' | 'NO'; column_default: string | null }>(
    h,
    sql`select column_name, data_type, is_nullable, column_default from information_schema.columns
        where table_schema = 'public' and table_name = ${table} order by ordinal_position`,
  );
  return rows.map((r) => [r.column_name, r.data_type, r.is_nullable, r.column_default] as const);
}

async function uniqueConstraints(h: StoreHarness, table: string): Promise<string[][]> {
  const rows = await owner<{ columns: string }>(
    h,
    sql`select string_agg(a.attname, ',' order by k.ord) as columns
        from pg_constraint c
        cross join lateral unnest(c.conkey) with ordinality as k(attnum, ord)
        join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.attnum
        where c.conrelid = ${table}::regclass and c.contype = 'u'
        group by c.oid`,
  );
  return rows.map((r) => r.columns.split(','));
}

const isCode = (code: string) => (e: unknown) => StoreError.isInstance(e) && e.code === code;

/** Migrations, the schema's exact shape, and its constraints. */
export function schemaContract(get: HarnessFactory): void {
  describe('migrations and schema', () => {
    it('applied every migration in the journal, and re-applying (also concurrently) changes nothing', async () => {
      const h = get();
      const journal = JSON.parse(readFileSync(join(MIGRATIONS_FOLDER, 'meta', '_journal.json'), 'utf8')) as { entries: unknown[] };
      const count = async () => (await owner<{ n: number }>(h, sql`select count(*)::int as n from drizzle.__drizzle_migrations`))[0]?.n;
      expect(await count()).toBe(journal.entries.length);
      await migrate(h.database);
      await Promise.all([migrate(h.database), migrate(h.database)]);
      expect(await count()).toBe(journal.entries.length);
      // Still usable after re-running.
      const scene = await newScene(h);
      expect(await h.stores.runs.get(scene.tenantId, scene.runId)).not.toBeNull();
    });

    it('tool_invocations is Section 15 plus every Schema addition, exactly', async () => {
      expect(await columnsOf(get(), 'tool_invocations')).toEqual(TOOL_INVOCATIONS);
    });

    it('veetbot_insert_intent names every column, and fills exactly the columns that have defaults', async () => {
      // sql/functions/veetbot_insert_intent.sql lists the columns by hand (a cached plan); a column added later must be
      // added there too, or a hot-path insert would silently drop its value.
      const h = get();
      const [fn] = await owner<{ body: string }>(h, sql`select prosrc as body from pg_proc where proname = 'veetbot_insert_intent'`);
      const insert = /INSERT INTO tool_invocations \(([^)]*)\)/.exec(fn?.body ?? '');
      const listed = (insert?.[1] ?? '').split(',').map((c) => c.trim());
      expect(listed).toEqual(TOOL_INVOCATIONS.map(([name]) => name));
      const withDefaults = TOOL_INVOCATIONS.filter(([, , , dflt]) => dflt !== null).map(([name]) => name);
      const coalesced = [...(fn?.body ?? '').matchAll(/coalesce\(r\.(\w+),/g)].map((m) => m[1]);
      expect(coalesced.sort()).toEqual(withDefaults.sort());
    });

    it('mcp_servers and mcp_tool_catalog are exactly as the specification lists them', async () => {
      const h = get();
      expect(await columnsOf(h, 'mcp_servers')).toEqual(MCP_SERVERS);
      expect(await columnsOf(h, 'mcp_tool_catalog')).toEqual(MCP_TOOL_CATALOG);
    });

    it('declares the unique keys the dedup, the event log and the catalog rely on', async () => {
      const h = get();
      expect(await uniqueConstraints(h, 'tool_invocations')).toContainEqual(['idempotency_key']);
      expect(await uniqueConstraints(h, 'mcp_servers')).toContainEqual(['tenant_id', 'server_id']);
      expect(await uniqueConstraints(h, 'mcp_tool_catalog')).toContainEqual(['tenant_id', 'server_id', 'catalog_hash', 'remote_name']);
      expect(await uniqueConstraints(h, 'events')).toContainEqual(['tenant_id', 'derivation_key']);
      expect(await uniqueConstraints(h, 'steps')).toContainEqual(['run_id', 'step_number']);
      expect(await uniqueConstraints(h, 'approvals')).toContainEqual(['invocation_id']);
    });

    it('enables and forces row-level security on every tenant table; the roles cannot bypass it', async () => {
      const h = get();
      const flags = await owner<{ relname: string; relrowsecurity: boolean; relforcerowsecurity: boolean }>(
        h,
        sql`select relname, relrowsecurity, relforcerowsecurity from pg_class
            where relnamespace = 'public'::regnamespace and relkind = 'r' order by relname`,
      );
      for (const table of TENANT_TABLES) {
        expect(
          flags.find((f) => f.relname === table),
          table,
        ).toMatchObject({ relrowsecurity: true, relforcerowsecurity: true });
      }
      expect(flags.find((f) => f.relname === 'tenants')).toMatchObject({ relrowsecurity: true, relforcerowsecurity: false });
      const roles = await owner<{ rolname: string; rolsuper: boolean; rolbypassrls: boolean; rolcanlogin: boolean }>(
        h,
        sql`select rolname, rolsuper, rolbypassrls, rolcanlogin from pg_roles
            where rolname in ('veetbot_app', 'veetbot_maintenance') order by rolname`,
      );
      expect(roles).toEqual([
        { rolname: 'veetbot_app', rolsuper: false, rolbypassrls: false, rolcanlogin: false },
        { rolname: 'veetbot_maintenance', rolsuper: false, rolbypassrls: false, rolcanlogin: false },
      ]);
    });

    it('NOT NULL columns really are NOT NULL (an explicit NULL is refused, defaults included)', async () => {
      const h = get();
      const scene = await newScene(h);
      const valid: Record<string, SQL> = {
        tenant_id: sql`${scene.tenantId}`,
        run_id: sql`${scene.runId}::uuid`,
        session_id: sql`${scene.sessionId}::uuid`,
        step_number: sql`1`,
        call_id: sql`'call_x'`,
        tool_name: sql`'demo.echo'`,
        tool_version: sql`'1'`,
        status: sql`'authorized'`,
        idempotency_key: sql`${crypto.randomUUID()}`,
        arguments_hash: sql`'h'`,
        arguments: sql`'{}'::jsonb`,
        created_at: sql`now()`,
        tool_source: sql`'builtin'`,
        idempotency_class: sql`'read_only'`,
        attempt_number: sql`1`,
        truncated: sql`false`,
        origin_trust: sql`'platform'`,
      };
      // As the owner (a superuser in tests), so row-level security's WITH CHECK cannot be what
      // refuses tenant_id = NULL: only the column constraint is tested here.
      const insert = (values: Record<string, SQL>) =>
        h.database.transaction({ role: 'owner' }, (tx) =>
          tx.execute(
            sql`insert into tool_invocations (${sql.join(
              Object.keys(values).map((c) => sql.identifier(c)),
              sql`, `,
            )}) values (${sql.join(Object.values(values), sql`, `)})`,
          ),
        );
      // The control: the valid row is accepted, so each refusal below is the NULL's doing.
      await insert(valid);
      const notNull = TOOL_INVOCATIONS.filter(([name, , nullable]) => nullable === 'NO' && name !== 'id').map(([name]) => name);
      expect(notNull.sort()).toEqual(Object.keys(valid).sort());
      for (const column of notNull) {
        await expect(insert({ ...valid, idempotency_key: sql`${crypto.randomUUID()}`, [column]: sql`NULL` }), column).rejects.toSatisfy(
          isCode('store.constraint'),
        );
      }
      const server = (overrides: Record<string, SQL>) =>
        h.database.transaction({ role: 'owner' }, (tx) => {
          const values: Record<string, SQL> = {
            tenant_id: sql`${scene.tenantId}`,
            server_id: sql`${crypto.randomUUID()}`,
            transport: sql`'http'`,
            endpoint: sql`'https://x'`,
            auth_scheme: sql`'none'`,
            side_effect: sql`'external_read'`,
            risk: sql`'low'`,
            idempotency: sql`'read_only'`,
            required_scopes: sql`'[]'::jsonb`,
            timeout_seconds: sql`10`,
            maximum_output_bytes: sql`1000`,
            enabled: sql`true`,
            created_at: sql`now()`,
            ...overrides,
          };
          return tx.execute(
            sql`insert into mcp_servers (${sql.join(
              Object.keys(values).map((c) => sql.identifier(c)),
              sql`, `,
            )}) values (${sql.join(Object.values(values), sql`, `)})`,
          );
        });
      await server({});
      for (const [column, , nullable] of MCP_SERVERS) {
        if (nullable === 'YES' || column === 'id') continue;
        await expect(server({ [column]: sql`NULL` }), column).rejects.toSatisfy(isCode('store.constraint'));
      }
    });

    it('closed vocabularies are checked: a status outside the eight is refused', async () => {
      const h = get();
      const scene = await newScene(h);
      const row = intent(scene);
      await h.stores.invocations.insertIntent(scene.tenantId, row, []);
      for (const [column, value] of [
        ['status', 'done'],
        ['suspended_kind', 'nap'],
        ['origin_trust', 'root'],
      ] as const) {
        await expect(
          h.database.tenant(scene.tenantId, (tx) =>
            tx.execute(sql`update tool_invocations set ${sql.identifier(column)} = ${value} where id = ${row.id}`),
          ),
          column,
        ).rejects.toSatisfy(isCode('store.constraint'));
      }
    });

    it('mcp_servers is UNIQUE (tenant_id, server_id): per tenant, not global', async () => {
      const h = get();
      const a = await newScene(h);
      const b = await newScene(h);
      await h.stores.mcpServers.create(a.tenantId, mcpServer('acme', a.t0));
      await expect(h.stores.mcpServers.create(a.tenantId, mcpServer('acme', a.t0))).rejects.toSatisfy(isCode('store.unique_violation'));
      await expect(h.stores.mcpServers.create(b.tenantId, mcpServer('acme', b.t0))).resolves.toMatchObject({ tenantId: b.tenantId });
      expect((await h.stores.mcpServers.list(a.tenantId)).map((s) => s.serverId)).toEqual(['acme']);
      const disabled = await h.stores.mcpServers.setEnabled(a.tenantId, 'acme', false);
      expect(disabled.enabled).toBe(false);
      expect(await h.stores.mcpServers.get(a.tenantId, 'acme')).toMatchObject({
        authScheme: 'bearer',
        credentialRef: 'env:ACME_TOKEN',
        maximumOutputBytes: 65_536,
      });
    });

    it('mcp_tool_catalog is UNIQUE (tenant_id, server_id, catalog_hash, remote_name) and a history', async () => {
      const h = get();
      const a = await newScene(h);
      const insertRaw = (hash: string, name: string) =>
        h.database.tenant(a.tenantId, (tx) =>
          tx.execute(sql`insert into mcp_tool_catalog (tenant_id, server_id, catalog_hash, remote_name, registry_name, input_schema, discovered_at)
                         values (${a.tenantId}, 'acme', ${hash}, ${name}, ${`mcp.acme.${name}`}, '{}'::jsonb, now())`),
        );
      await insertRaw('h1', 'search');
      await expect(insertRaw('h1', 'search')).rejects.toSatisfy(isCode('store.unique_violation'));
      await insertRaw('h2', 'search');
      await insertRaw('h1', 'fetch');

      const t1 = a.t0;
      const t2 = new Date(t1.getTime() + 60_000);
      const tool = (name: string) => ({ remoteName: name, registryName: `mcp.acme.${name}`, inputSchema: { type: 'object' } });
      const first = await h.stores.mcpCatalog.recordGeneration(a.tenantId, {
        serverId: 'acme',
        catalogHash: 'g1',
        discoveredAt: t1,
        tools: [tool('a'), tool('b')],
      });
      expect(first.map((r) => r.remoteName)).toEqual(['a', 'b']);
      // The same generation again writes nothing new.
      const repeat = await h.stores.mcpCatalog.recordGeneration(a.tenantId, {
        serverId: 'acme',
        catalogHash: 'g1',
        discoveredAt: t2,
        tools: [tool('a'), tool('b')],
      });
      expect(repeat.map((r) => r.id)).toEqual(first.map((r) => r.id));
      // A new generation without 'b' stamps b's old rows withdrawn; a's stay as history.
      await h.stores.mcpCatalog.recordGeneration(a.tenantId, {
        serverId: 'acme',
        catalogHash: 'g2',
        discoveredAt: t2,
        tools: [tool('a'), tool('c')],
      });
      const g1 = await h.stores.mcpCatalog.getGeneration(a.tenantId, 'acme', 'g1');
      expect(g1.map((r) => [r.remoteName, r.withdrawnAt?.getTime() ?? null])).toEqual([
        ['a', null],
        ['b', t2.getTime()],
      ]);
      expect((await h.stores.mcpCatalog.latest(a.tenantId, 'acme')).map((r) => r.remoteName)).toEqual(['a', 'c']);
      // Never updated in place: only withdrawn_at, once.
      const id = g1[0]?.id ?? '';
      await expect(
        h.database.tenant(a.tenantId, (tx) =>
          tx.execute(sql`update mcp_tool_catalog set input_schema = '{"type":"string"}'::jsonb where id = ${id}`),
        ),
      ).rejects.toSatisfy(isCode('store.invalid_transition'));
      const withdrawnId = g1[1]?.id ?? '';
      await expect(
        h.database.tenant(a.tenantId, (tx) => tx.execute(sql`update mcp_tool_catalog set withdrawn_at = now() where id = ${withdrawnId}`)),
      ).rejects.toSatisfy(isCode('store.invalid_transition'));
    });
  });
}
