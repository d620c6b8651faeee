// Typed handles on the gate's CommonJS modules (dependency-cruiser reads .cjs configuration).

import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const REPO_ROOT = join(PACKAGE_ROOT, '..', '..');
export const FIXTURES = join(PACKAGE_ROOT, 'fixtures');

export interface BoundaryRow {
  kind: 'package' | 'app' | 'composition' | 'test-support' | 'tooling';
  workspace: readonly string[] | symbol;
  external: readonly string[] | symbol;
  builtins: readonly string[] | symbol;
  typeOnly: boolean;
  dev: { workspace: readonly string[]; external: readonly string[] };
}

export interface BoundaryTable {
  scope: string;
  rows: Record<string, BoundaryRow>;
  exclusiveLibraries: readonly { rule: string; owner: string; libraries: readonly string[] }[];
  testAllowances: { external: readonly string[]; builtins: symbol };
  ALL_PACKAGES: symbol;
  ANY: symbol;
  ALL_BUILTINS: symbol;
}

export interface ForbiddenRule {
  name: string;
  severity: string;
  from: Record<string, unknown>;
  to: Record<string, unknown>;
}

interface GenerateRulesModule {
  generateForbiddenRules(table: BoundaryTable, options: { repoRoot: string }): ForbiddenRule[];
  findProblems(table: BoundaryTable, repoRoot: string): string[];
  BoundaryTableError: new (problems: string[]) => Error & { problems: string[] };
}

const require = createRequire(import.meta.url);

export const table = require(join(PACKAGE_ROOT, 'table.cjs')) as BoundaryTable;
export const generator = require(join(PACKAGE_ROOT, 'generate-rules.cjs')) as GenerateRulesModule;
