import { z } from 'zod';
import { IdempotencyClass, RiskLevel, SideEffectClass, ToolKind, ToolSource } from './enums';
import { TrustLevel } from './trust';
import { TARGET_KINDS } from './domain-partition';

/** A JSON Schema document, admitted by the validation package. */
export const JsonSchemaDocument = z.record(z.string(), z.unknown());
export type JsonSchemaDocument = z.infer<typeof JsonSchemaDocument>;

export const TargetKind = z.enum(TARGET_KINDS);
export type TargetKind = z.infer<typeof TargetKind>;

/**
 * § ToolSpec, completed: Section 8.1's twelve fields plus kind, target_kind, output_trust,
 * source, server_id, device_id, deprecated, and Milestone 26's model_visible. The shape is
 * checked here; the registration rules (grammar, domains, ceilings, control rules, targets)
 * are the registry's.
 */
export const ToolSpec = z
  .object({
    name: z.string().min(1),
    version: z.string().min(1).max(128),
    description: z.string(),
    input_schema: JsonSchemaDocument,
    output_schema: JsonSchemaDocument.nullable(),
    side_effect: SideEffectClass,
    risk: RiskLevel,
    idempotency: IdempotencyClass,
    required_scopes: z.array(z.string().min(1)).transform((scopes) => [...new Set(scopes)].sort()),
    timeout_seconds: z.number().int().positive(),
    maximum_output_bytes: z.number().int().positive(),
    allow_parallel: z.boolean(),
    kind: ToolKind.default('capability'),
    target_kind: TargetKind.default('in_process'),
    // Required, never defaulted (§ ToolSpec, completed: "output_trust is required").
    output_trust: TrustLevel,
    source: ToolSource.default('builtin'),
    server_id: z.string().nullable().default(null),
    device_id: z.string().nullable().default(null),
    deprecated: z.boolean().default(false),
    model_visible: z.boolean().default(true),
  })
  .strict();
/** A ToolSpec after parsing: every default applied. */
export type ToolSpec = z.infer<typeof ToolSpec>;
/** What a declaration may omit (the defaulted fields). */
export type ToolSpecInput = z.input<typeof ToolSpec>;
