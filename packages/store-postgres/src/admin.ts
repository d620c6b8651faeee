import pg from 'pg';

const DATABASE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

async function onServer(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** The URL of database `name` on the server `serverUrl` points at. */
export function databaseUrl(serverUrl: string, name: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * Operator and test tooling: create a database on the server. The name is checked against a
 * strict grammar because it cannot be a bound parameter.
 */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  if (!DATABASE_NAME.test(name)) throw new RangeError(`invalid database name: ${name}`);
  await onServer(serverUrl, `CREATE DATABASE ${name}`);
  return databaseUrl(serverUrl, name);
}

/** Drop a database, disconnecting its sessions first. */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  if (!DATABASE_NAME.test(name)) throw new RangeError(`invalid database name: ${name}`);
  await onServer(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}
