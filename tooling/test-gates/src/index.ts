export { postgresOnlyExclusions, type PostgresOnlyExclusionsOptions } from './postgres-only-exclusions.ts';
