import { canonicalJson, domainPartition, isValidToolName, RESERVED_DOMAINS, type ToolSource, ToolSpec, toolDomain } from '@veetbot/domain';
import type { SchemaValidator } from '@veetbot/ports';
import { failure, type RuleFailure } from './registration-codes';
import { checkControlRules } from './control-rules';
import { checkSourceIdentity, forceDynamicFields } from './source-rules';
import { checkTargetRules } from './target-rules';
import { flagEnabled, flagFor } from './flags';

export interface RuleContext {
  readonly validator: SchemaValidator;
  readonly globalMaximumOutputBytes: number;
  readonly flags: Readonly<Record<string, boolean>>;
}

export type RuleVerdict = { readonly ok: true; readonly spec: ToolSpec } | ({ readonly ok: false } & RuleFailure);

const refuse = (f: RuleFailure): RuleVerdict => ({ ok: false, ...f });

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** The root of an input schema describes an object: tool arguments are one. */
function describesObject(schema: Record<string, unknown>): boolean {
  const type = schema.type;
  return type === 'object' || (Array.isArray(type) && type.length === 1 && type[0] === 'object');
}

/**
 * Hard gate 1: every registration rule but the registry-state ones (duplicate, source
 * conflict), for one declaration arriving through `source`'s path. Pure apart from the
 * validator's compile. The first broken rule is the verdict; the order puts shape before
 * meaning and the deployment flag last, so a flagged-off builtin with a real defect still
 * fails the build.
 */
export function checkRegistration(declaration: unknown, source: ToolSource, context: RuleContext): RuleVerdict {
  if (!isPlainObject(declaration)) return refuse(failure('registry.spec_invalid', 'The declaration is not an object.'));

  let input: Record<string, unknown>;
  if (source === 'builtin') {
    if (declaration.source !== undefined && declaration.source !== 'builtin') return refuse(failure('registry.source_mismatch'));
    // The zod schema requires output_trust too; this names the rule (Hard gate 1).
    if (declaration.output_trust === undefined) return refuse(failure('registry.output_trust_missing'));
    input = declaration;
  } else {
    // § Control tools: the set is closed at build time; no runtime path, whatever the name.
    if (declaration.kind === 'control') return refuse(failure('registry.control_dynamic'));
    if (declaration.source !== undefined && declaration.source !== source) return refuse(failure('registry.source_mismatch'));
    input = forceDynamicFields(declaration, source);
  }

  const parsed = ToolSpec.safeParse(input);
  if (!parsed.success) {
    // The issue's path and code, never its message: zod messages can quote the input.
    const issue = parsed.error.issues[0];
    const where = issue === undefined || issue.path.length === 0 ? '(root)' : issue.path.map(String).join('.');
    return refuse(failure('registry.spec_invalid', `First issue: ${issue?.code ?? 'unknown'} at ${where}.`));
  }
  const spec = parsed.data;

  // § Names.
  if (!isValidToolName(spec.name)) return refuse(failure('registry.name_invalid'));

  // § The registry: partitioned domains; mcp and device are reserved (Hard gate 10).
  const domain = toolDomain(spec.name);
  if (spec.source === 'builtin' && RESERVED_DOMAINS.has(domain)) return refuse(failure('registry.domain_reserved'));
  const partition = domainPartition(domain);
  if (partition === undefined) return refuse(failure('registry.domain_unknown'));
  if (!partition.sources.includes(spec.source) || !partition.kinds.includes(spec.kind)) {
    return refuse(failure('registry.domain_partition'));
  }

  const control = checkControlRules(spec);
  if (control !== undefined) return refuse(control);
  const identity = checkSourceIdentity(spec);
  if (identity !== undefined) return refuse(identity);
  const target = checkTargetRules(spec);
  if (target !== undefined) return refuse(target);

  // § Output: limits. A registration error, never a silent clamp.
  if (spec.maximum_output_bytes > context.globalMaximumOutputBytes) {
    return refuse(failure('registry.output_ceiling', `The ceiling is ${context.globalMaximumOutputBytes} bytes.`));
  }

  // § Argument validation: dialect, in-document $ref, depth, size; then an object root.
  const inputAdmission = context.validator.admit(spec.input_schema);
  if (!inputAdmission.ok) return { ok: false, code: inputAdmission.code, reason: `input_schema: ${inputAdmission.message}` };
  if (!describesObject(spec.input_schema)) {
    return { ok: false, code: 'schema.not_object', reason: 'input_schema: An input schema must describe an object (type: "object").' };
  }
  if (spec.output_schema !== null) {
    const outputAdmission = context.validator.admit(spec.output_schema);
    if (!outputAdmission.ok) return { ok: false, code: outputAdmission.code, reason: `output_schema: ${outputAdmission.message}` };
  }

  // The spec is hashed into tool_schema_sha256 (§ Resolution); one that cannot be
  // canonicalized could never be pinned.
  try {
    canonicalJson(spec);
  } catch {
    return refuse(failure('registry.spec_canonical'));
  }

  const flag = flagFor(spec.name);
  if (flag !== undefined && !flagEnabled(flag, context.flags)) return refuse(failure('registry.flag_disabled', `Gate: ${flag}.`));

  return { ok: true, spec };
}
