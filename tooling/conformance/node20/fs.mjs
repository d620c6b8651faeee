// Node's fs plus the one Node 22 function the suite imports. The suite uses it only as
// globSync('**/checks.json', { cwd }) (its tier-check reads results back); that one pattern
// shape, `**/<file name>`, is what this supports — anything else throws rather than guessing.
import fs from 'node:fs';
import { basename } from 'node:path';

export * from 'node:fs';
export default fs;

export function globSync(pattern, options = {}) {
  const match = /^\*\*\/([^*?/[\]{}]+)$/.exec(pattern);
  if (match === null) throw new Error(`node20 globSync shim: unsupported pattern ${pattern}`);
  return fs
    .readdirSync(options.cwd ?? process.cwd(), { recursive: true })
    .map(String)
    .filter((path) => basename(path) === match[1]);
}
