import type { ScratchDatabase } from './postgres-server';

/**
 * The peer a user would pick instead of the governed call: a DBOS Transact workflow with one
 * no-op step (`@dbos-inc/dbos-sdk`, pinned in package.json), its system database a fresh
 * database on the same PostgreSQL server. Invoked directly (`await workflow(i)`), which runs
 * it in this process and awaits its promise — no queue, no polling.
 */
export interface DbosPeer {
  /** One workflow execution with a fresh workflow id (DBOS's default), so nothing dedups. */
  call(): Promise<void>;
  close(): Promise<void>;
}

export type DbosPeerResult =
  | { readonly ok: true; readonly peer: DbosPeer; readonly version: string }
  | { readonly ok: false; readonly reason: string };

/** DBOS's own pool, sized like the store's (10), so neither side has more connections. */
const POOL_SIZE = 10;

export async function openDbosPeer(database: ScratchDatabase): Promise<DbosPeerResult> {
  let sdk: typeof import('@dbos-inc/dbos-sdk');
  try {
    sdk = await import('@dbos-inc/dbos-sdk');
  } catch (error) {
    return { ok: false, reason: `@dbos-inc/dbos-sdk did not load: ${describe(error)}` };
  }
  const { DBOS } = sdk;
  try {
    DBOS.setConfig({ name: 'veetbot-bench-peer', systemDatabaseUrl: database.url, systemDatabasePoolSize: POOL_SIZE, logLevel: 'error' });
    const noop = async (i: number) => i;
    const workflow = DBOS.registerWorkflow(
      async (i: number) => {
        await DBOS.runStep(() => noop(i), { name: 'noop' });
        return i;
      },
      { name: 'bench_one_noop_step' },
    );
    await DBOS.launch();
    let n = 0;
    // Prove it works before timing it: the step's value comes back.
    if ((await workflow(41)) !== 41) throw new Error('the DBOS workflow returned the wrong value');
    const version = await packageVersion();
    return {
      ok: true,
      version,
      peer: {
        async call() {
          n += 1;
          await workflow(n);
        },
        async close() {
          await DBOS.shutdown();
        },
      },
    };
  } catch (error) {
    await DBOS.shutdown().catch(() => undefined);
    return { ok: false, reason: describe(error) };
  }
}

/** The installed version (the package exports no ./package.json, so read it from node_modules). */
async function packageVersion(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  const text = await readFile(new URL('../node_modules/@dbos-inc/dbos-sdk/package.json', import.meta.url), 'utf8');
  return (JSON.parse(text) as { version: string }).version;
}

function describe(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return String(error);
}
