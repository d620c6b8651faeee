import { z } from 'zod';
import { NullableTimestamp, Timestamp } from './common';

/** One tool of a catalog generation: names and the sha256 of its input schema (not the schema). */
export const McpCatalogTool = z
  .object({
    registry_name: z.string(),
    remote_name: z.string(),
    input_schema_sha256: z.string(),
    withdrawn_at: NullableTimestamp,
  })
  .strict();

/** What changed from the generation before (registry names; `changed`: same name, another input schema). */
export const McpCatalogDiff = z
  .object({
    added: z.array(z.string()),
    removed: z.array(z.string()),
    changed: z.array(z.string()),
  })
  .strict();

export const McpCatalogGeneration = z
  .object({
    catalog_hash: z.string(),
    discovered_at: Timestamp,
    tools: z.array(McpCatalogTool),
    diff: McpCatalogDiff,
  })
  .strict();

/** A server's catalog history (§ Schema additions: never updated in place), oldest first, each with its diff. */
export const McpCatalogHistory = z
  .object({
    server_id: z.string(),
    generations: z.array(McpCatalogGeneration),
  })
  .strict();
export type McpCatalogHistory = z.infer<typeof McpCatalogHistory>;
