import { parseArgs } from 'node:util';
import {
  createApiKey,
  createTenant,
  openAndMigrate,
  ProvisionError,
  readSettings,
  revokeApiKey,
  StartupError,
  startupErrorLine,
} from '@veetbot/composition';
import { createStores } from '@veetbot/store-postgres';

export const OPERATOR_USAGE = `Tenants and API keys, written straight to the database the settings name (DATABASE_URL, else
the embedded PGlite in VEETBOT_DATA_DIR — stop \`pnpm start\` first: PGlite belongs to one process,
and while a process holds it these commands stop with startup.database_in_use).

  veetbot tenant create TENANT [--name NAME]
  veetbot key create --tenant TENANT --scopes SCOPE,SCOPE [--principal ID]
                                            a key for one principal with exactly these scopes;
                                            printed once, stored only as its sha256
  veetbot key revoke --key vbk_…            by the key itself
  veetbot key revoke --tenant TENANT --key-id ID
  (every command takes --json for one JSON line instead of text)

Separate the agent's key from the approver's: the agent's without approvals.decide,
  veetbot key create --tenant demo --principal agent --scopes workspace.read,workspace.write,demo.write,mcp.*
  veetbot key create --tenant demo --principal approver --scopes approvals.decide,review.resolve,questions.answer
`;

interface Io {
  out(text: string): void;
  err(text: string): void;
}

const OPTIONS = {
  name: { type: 'string' },
  tenant: { type: 'string' },
  scopes: { type: 'string' },
  principal: { type: 'string' },
  key: { type: 'string' },
  'key-id': { type: 'string' },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
} as const;

const parseOperatorArgs = (args: string[]) => parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });

/** `veetbot tenant …` and `veetbot key …`: 0 done, 1 refused or failed, 2 usage. */
export async function runOperatorCommand(
  argv: readonly string[],
  io: Io,
  env: Readonly<Record<string, string | undefined>> = process.env,
  cwd = process.cwd(),
): Promise<number> {
  let parsed: ReturnType<typeof parseOperatorArgs>;
  try {
    parsed = parseOperatorArgs([...argv]);
  } catch (error) {
    io.err(`veetbot: ${error instanceof Error ? error.message : String(error)}\n\n${OPERATOR_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [noun, verb, ...rest] = positionals;
  const usage = (why: string) => {
    io.err(`veetbot: ${why}\n\n${OPERATOR_USAGE}`);
    return 2;
  };
  if (values.help) {
    io.out(OPERATOR_USAGE);
    return 0;
  }
  const print = (text: string, json: Record<string, unknown>) => io.out(values.json ? `${JSON.stringify(json)}\n` : `${text}\n`);

  let action: (stores: ReturnType<typeof createStores>) => Promise<void>;
  if (noun === 'tenant' && verb === 'create') {
    const tenantId = rest[0] ?? values.tenant;
    if (tenantId === undefined || rest.length > 1) return usage('tenant create takes one TENANT.');
    action = async (stores) => {
      const { created } = await createTenant(stores, {
        tenantId,
        ...(values.name === undefined ? {} : { tenantName: values.name }),
        now: new Date(),
      });
      print(created ? `tenant ${tenantId} created` : `tenant ${tenantId} exists (unchanged)`, { tenant_id: tenantId, created });
    };
  } else if (noun === 'key' && verb === 'create') {
    if (rest.length > 0) return usage('key create takes no positional argument.');
    const tenantId = values.tenant;
    if (tenantId === undefined) return usage('key create needs --tenant.');
    if (values.scopes === undefined) return usage('key create needs --scopes (comma separated; name each scope the principal may use).');
    const scopes = values.scopes
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    const principalId = values.principal ?? `${tenantId}-key`;
    action = async (stores) => {
      const { key, keyId } = await createApiKey(stores, { tenantId, principalId, scopes, now: new Date() });
      print(
        [
          `key ${keyId} for principal ${principalId} of tenant ${tenantId}, scopes ${scopes.join(',') || '(none)'}`,
          `API key (printed this once; stored only as a sha256):`,
          `  ${key}`,
        ].join('\n'),
        { tenant_id: tenantId, principal_id: principalId, key_id: keyId, scopes, key },
      );
    };
  } else if (noun === 'key' && verb === 'revoke') {
    if (rest.length > 0) return usage('key revoke takes --key, or --tenant with --key-id.');
    const byKey = values.key;
    const byId = values['key-id'];
    if ((byKey === undefined) === (byId === undefined && values.tenant === undefined))
      return usage('key revoke takes --key, or --tenant with --key-id.');
    if (byKey === undefined && (byId === undefined || values.tenant === undefined)) return usage('key revoke --key-id needs --tenant.');
    action = async (stores) => {
      const row = await revokeApiKey(stores, byKey !== undefined ? { key: byKey } : { tenantId: values.tenant!, keyId: byId! }, new Date());
      print(`key ${row.id} of tenant ${row.tenantId} revoked at ${row.revokedAt?.toISOString()}`, {
        tenant_id: row.tenantId,
        key_id: row.id,
        revoked_at: row.revokedAt?.toISOString() ?? null,
      });
    };
  } else {
    return usage(`unknown command ${[noun, verb].filter(Boolean).join(' ') || '(none)'}.`);
  }

  let database: Awaited<ReturnType<typeof openAndMigrate>>;
  try {
    // The same settings as every process (ADR 0022): DATABASE_URL, VEETBOT_DATA_DIR, …
    database = await openAndMigrate(readSettings(env, [], cwd));
  } catch (error) {
    io.err(`${startupErrorLine(error)}\n`);
    return 1;
  }
  try {
    await action(createStores(database));
    return 0;
  } catch (error) {
    if (error instanceof ProvisionError || error instanceof StartupError) io.err(`error ${error.code}: ${error.message}\n`);
    else io.err(`error internal: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}\n`);
    return 1;
  } finally {
    await database.close();
  }
}
