import type { JsonSchemaDocument } from '@veetbot/domain';
import type { McpElicitationQuestion, SchemaValidator } from '@veetbot/ports';
import { z } from 'zod';

/**
 * A server's `elicitation/create` as the adapter admits it (docs/adr/0060). The server is
 * hostile: its message is bounded text, and its requested schema must be what the MCP
 * specification allows — a flat object whose properties are primitives — rebuilt here from the
 * keywords we understand (anything else is dropped, never passed on), then admitted by the
 * schema validator with its limits, exactly as an input schema is.
 */

/** The longest message a question shows (characters). */
export const ELICITATION_MESSAGE_MAX_CHARACTERS = 4_000;
/** Fields one form may ask for. */
export const ELICITATION_MAX_FIELDS = 32;
const TEXT_MAX = 1_000;
const ENUM_MAX = 100;

const Text = z.string().max(TEXT_MAX);
const Label = { title: Text.optional(), description: Text.optional() };
const FieldName = z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/);
const EnumValue = z.string().max(TEXT_MAX);
const TitledConst = z.object({ const: EnumValue, title: Text.optional() });

const StringField = z.object({
  type: z.literal('string'),
  ...Label,
  minLength: z.number().int().min(0).max(100_000).optional(),
  maxLength: z.number().int().min(0).max(100_000).optional(),
  format: z.enum(['email', 'uri', 'date', 'date-time']).optional(),
  enum: z.array(EnumValue).min(1).max(ENUM_MAX).optional(),
  enumNames: z.array(Text).max(ENUM_MAX).optional(),
  oneOf: z.array(TitledConst).min(1).max(ENUM_MAX).optional(),
  default: z.string().max(100_000).optional(),
});
const NumberField = z.object({
  type: z.enum(['number', 'integer']),
  ...Label,
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  default: z.number().optional(),
});
const BooleanField = z.object({ type: z.literal('boolean'), ...Label, default: z.boolean().optional() });
const MultiSelectField = z.object({
  type: z.literal('array'),
  ...Label,
  minItems: z.number().int().min(0).max(ENUM_MAX).optional(),
  maxItems: z.number().int().min(0).max(ENUM_MAX).optional(),
  items: z.union([
    z.object({ type: z.literal('string'), enum: z.array(EnumValue).min(1).max(ENUM_MAX) }),
    z.object({ anyOf: z.array(TitledConst).min(1).max(ENUM_MAX) }),
  ]),
  default: z.array(EnumValue).max(ENUM_MAX).optional(),
});
const Field = z.union([StringField, NumberField, BooleanField, MultiSelectField]);

const RequestedSchema = z
  .object({
    type: z.literal('object'),
    properties: z.record(FieldName, Field).default({}),
    required: z.array(FieldName).max(ELICITATION_MAX_FIELDS).optional(),
  })
  .refine((s) => Object.keys(s.properties).length <= ELICITATION_MAX_FIELDS, 'too many fields')
  .refine((s) => (s.required ?? []).every((name) => Object.hasOwn(s.properties, name)), 'required names a field the form lacks');

const FormParams = z.object({
  mode: z.literal('form').optional(),
  message: z.string().min(1).max(ELICITATION_MESSAGE_MAX_CHARACTERS),
  requestedSchema: RequestedSchema,
});

export type ElicitationAdmission =
  | { readonly ok: true; readonly question: McpElicitationQuestion }
  | { readonly ok: false; readonly code: ElicitationRefusal };

export type ElicitationRefusal = 'mcp.elicitation.url_mode' | 'mcp.elicitation.invalid_request' | 'mcp.elicitation.schema_refused';

/** The request's params, admitted or refused with a code (the server's text never appears in a code). */
export function admitElicitation(params: unknown, validator: SchemaValidator): ElicitationAdmission {
  if (typeof params === 'object' && params !== null && (params as { mode?: unknown }).mode === 'url')
    return { ok: false, code: 'mcp.elicitation.url_mode' };
  const parsed = FormParams.safeParse(params);
  if (!parsed.success) return { ok: false, code: 'mcp.elicitation.invalid_request' };
  const { properties, required } = parsed.data.requestedSchema;
  // Rebuilt from what was understood, never the server's object as sent (no extra keywords, no
  // prototype tricks); an object with no other properties than these.
  const schema: JsonSchemaDocument = {
    type: 'object',
    properties: Object.fromEntries(Object.entries(properties).map(([name, field]) => [name, stripUndefined(field)])),
    ...(required === undefined || required.length === 0 ? {} : { required: [...new Set(required)] }),
    additionalProperties: false,
  };
  const admission = validator.admit(schema);
  if (!admission.ok) return { ok: false, code: 'mcp.elicitation.schema_refused' };
  return { ok: true, question: { message: parsed.data.message, requestedSchema: schema } };
}

function stripUndefined(field: z.infer<typeof Field>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(field).filter(([, v]) => v !== undefined));
}
