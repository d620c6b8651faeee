import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadManifests } from './manifest';
import { postgresAnswers } from './postgres-probe';
import { LOCAL_POSTGRES, summarize } from './summary';

/**
 * The last step of the root `pnpm test` (ADR 0026): `... ; tsx tooling/test-gates/src/main.ts $?`.
 * Prints, after turbo's output, which hard gates and suites did not run and the one line that
 * runs them, and exits with the status of the steps before it (or 1 on CI when something did
 * not run).
 */
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const argument = process.argv[2];
const previousStatus = argument === undefined ? 0 : Number.parseInt(argument, 10);
if (!Number.isInteger(previousStatus) || previousStatus < 0) {
  console.error(`usage: tsx tooling/test-gates/src/main.ts [exit status of the steps before]; got ${JSON.stringify(argument)}`);
  process.exit(2);
}

const databaseUrl = process.env.DATABASE_URL;
const unset = databaseUrl === undefined || databaseUrl.trim() === '';
const summary = summarize({
  manifests: loadManifests(root),
  databaseUrl,
  localPostgres: unset ? await postgresAnswers(LOCAL_POSTGRES.host, LOCAL_POSTGRES.port) : false,
  ci: Boolean(process.env.CI) && process.env.CI !== 'false',
  previousStatus,
});
// Red and bold on a terminal, so it cannot be mistaken for one more line of turbo's output.
const colour = !summary.complete && process.stdout.isTTY && !process.env.NO_COLOR;
console.log(colour ? `\u001b[1;31m${summary.text}\u001b[0m` : summary.text);
process.exit(summary.exitCode);
