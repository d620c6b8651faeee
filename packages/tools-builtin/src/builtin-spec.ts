import { ToolSpec, type ToolSpecInput } from '@veetbot/domain';

/** JSON Schema draft 2020-12: the one dialect the validation package admits (§ Argument validation). */
export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/**
 * Parse a builtin's declaration so the defaulted fields (kind, target_kind, source, …) are
 * applied exactly as the registry will see them. A declaration that does not parse is a
 * programming error and throws at module load, not at call time.
 */
export function defineBuiltinSpec(declaration: ToolSpecInput): ToolSpec {
  return ToolSpec.parse(declaration);
}
