export { AjvSchemaValidator, type AjvSchemaValidatorOptions } from './ajv-schema-validator';
export { admitSchema, describesObject } from './schema-admission';
export { closeObjectSchemas } from './close-objects';
export { DIALECT_2020_12, SCHEMA_MAX_DEPTH, SCHEMA_MAX_BYTES, INSTANCE_MAX_DEPTH } from './limits';
export type { CacheStats } from './validator-cache';
export type * from './types';
