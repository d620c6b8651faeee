import { checkJsonValue, describeJsonPath, type ToolSpec } from '@veetbot/domain';
import type { SchemaValidator, SchemaViolation } from '@veetbot/ports';
import { concludeWithoutExecution, proceed, stop, type StepResult } from '../render-item';

/** The one note an invalid-arguments outcome carries: where in the schema, never the value. */
export function violationNote(v: Pick<SchemaViolation, 'schemaPath' | 'keyword'>): string {
  return `Arguments failed validation at schema path ${v.schemaPath} (keyword: ${v.keyword}).`;
}

/**
 * Step 4: validate against input_schema with additionalProperties false unless the schema
 * says true, defaults applied (§ Argument validation). Failure is FAILED with
 * tool.arguments_invalid and the first error's schema path.
 */
export function validateArguments(
  validator: SchemaValidator,
  spec: ToolSpec,
  args: unknown,
  callId: string,
): StepResult<Record<string, unknown>> {
  // ADR 0019: nesting, NUL, lone surrogates, `__proto__` keys and non-JSON values are refused
  // before the validator (or anything else) walks the value — the same check the api applies
  // to a body, so every path into the pipeline gets the same verdict.
  const refused = checkJsonValue(args, { canonicalNumbers: true });
  if (refused !== null) {
    const at = refused.path.length === 0 ? 'the root' : describeJsonPath(refused.path);
    return stop(
      concludeWithoutExecution(callId, spec.name, 'tool.arguments_invalid', 'failed', [
        `Arguments are refused at ${at} (${refused.code}): ${refused.message}.`,
      ]),
    );
  }
  const result = validator.validateArguments({ toolName: spec.name, toolVersion: spec.version }, spec.input_schema, args);
  if (result.valid) return proceed(result.value);
  return stop(concludeWithoutExecution(callId, spec.name, 'tool.arguments_invalid', 'failed', [violationNote(result.violation)]));
}
