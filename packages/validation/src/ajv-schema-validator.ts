import { Ajv2020, type Options, type ValidateFunction } from 'ajv/dist/2020';
import { canonicalJson, SchemaAdmissionError } from '@veetbot/domain';
import type {
  AdmissionOptions,
  ArgumentValidation,
  JsonSchemaDocument,
  OutputValidation,
  SchemaAdmission,
  ValidatorCacheKey,
} from './types';
import { DEFAULT_MAX_CACHED_VALIDATORS } from './limits';
import { admitSchema } from './schema-admission';
import { checkSchemaStructure } from './schema-structure';
import { closeObjectSchemas } from './close-objects';
import { validateArgumentsWith, validateOutputWith, type CompiledArguments } from './argument-validator';
import { schemaNamesPrototypeMember } from './json-instance';
import { ValidatorCache, type CacheStats } from './validator-cache';

/**
 * ajv settings shared by both engines:
 * - strict: false. Schemas arrive from MCP servers and carry keywords ajv does not know
 *   (`x-*`, vendor annotations); strict mode would refuse them. Meta-schema validation
 *   (validateSchema) stays on, so a structurally invalid schema is still refused.
 * - validateFormats: false. In 2020-12 `format` is an annotation unless a format-assertion
 *   vocabulary is chosen; ajv ships no formats without ajv-formats, and an unknown format
 *   must not make a schema uncompilable.
 * - ownProperties: true. Only own keys count, so `required: ["constructor"]` is not met by
 *   Object.prototype.

 * - allErrors: false. The first error is all a violation reports, and stopping there is
 *   cheaper on hostile input.
 * - coerceTypes stays off: "5" is not 5.
 */
const BASE_OPTIONS: Options = {
  strict: false,
  validateFormats: false,
  ownProperties: true,
  allErrors: false,
  coerceTypes: false,
};

export interface AjvSchemaValidatorOptions {
  /** Compiled validators kept per cache (arguments, outputs). */
  readonly maxCachedValidators?: number;
}

/**
 * The SchemaValidator port (@veetbot/ports) over ajv's draft 2020-12 engine. Two engines: one
 * with `useDefaults` for arguments (§ canonical form: "the validated document after defaults
 * are applied"), one without for outputs and admission.
 */
/** Admission results kept (oldest dropped first): a few catalogs' worth of schemas. */
const MAX_CACHED_ADMISSIONS = 10_000;

export class AjvSchemaValidator {
  readonly #argumentsEngine = new Ajv2020({ ...BASE_OPTIONS, useDefaults: true });
  readonly #outputEngine = new Ajv2020({ ...BASE_OPTIONS, useDefaults: false });
  readonly #arguments: ValidatorCache<CompiledArguments>;
  readonly #admissions = new Map<string, SchemaAdmission>();
  readonly #outputs: ValidatorCache<ValidateFunction>;

  constructor(options: AjvSchemaValidatorOptions = {}) {
    const max = options.maxCachedValidators ?? DEFAULT_MAX_CACHED_VALIDATORS;
    this.#arguments = new ValidatorCache({ max, compile: (schema) => this.#compileArguments(schema) });
    this.#outputs = new ValidatorCache({ max, compile: (schema) => this.#compileOutput(schema) });
  }

  /** § Argument validation: dialect, in-document $ref only, depth ≤ 16, serialized ≤ 32 KB. */
  admit(schema: JsonSchemaDocument, options: AdmissionOptions = {}): SchemaAdmission {
    // Admission is a pure function of the document and the options. An MCP catalog is admitted
    // by the adapter's mapping and again by registerDynamic, and rediscovered on every
    // reconnection: each distinct document compiles once. The key is the canonical form, which
    // refuses anything that is not JSON (JSON.stringify would silently drop a function or an
    // undefined and collide with a clean document); such documents are not cached, and
    // admission refuses them anyway.
    let key: string | null = null;
    try {
      key = `${options.requireObject === true ? 'o' : 'a'}:${canonicalJson(schema)}`;
    } catch {
      key = null;
    }
    const cached = key === null ? undefined : this.#admissions.get(key);
    if (cached !== undefined) return cached;
    // No code generation here: the structure is checked, and each validator is compiled at its
    // tool's first call (schema-structure.ts).
    const admission = admitSchema(schema, options, (document) =>
      checkSchemaStructure(this.#outputEngine, document, (embedded) => {
        compileOnce(this.#outputEngine, embedded);
      }),
    );
    if (key !== null) {
      if (this.#admissions.size >= MAX_CACHED_ADMISSIONS) this.#admissions.delete(this.#admissions.keys().next().value as string);
      this.#admissions.set(key, admission);
    }
    return admission;
  }

  /** Step 4: closed objects unless the schema says otherwise; defaults applied to a copy. */
  validateArguments(key: ValidatorCacheKey, schema: JsonSchemaDocument, args: unknown): ArgumentValidation {
    return validateArgumentsWith(this.#arguments.get(key, schema), args);
  }

  /** Step 11: a result's structured part against output_schema, as written. */
  validateOutput(key: ValidatorCacheKey, schema: JsonSchemaDocument, value: unknown): OutputValidation {
    return validateOutputWith(this.#outputs.get(key, schema), value);
  }

  /** Compilations, hits and sizes of the two caches (for metrics and tests). */
  cacheStats(): { readonly arguments: CacheStats; readonly outputs: CacheStats } {
    return { arguments: this.#arguments.stats(), outputs: this.#outputs.stats() };
  }

  // A schema that was never admitted is admitted here first, so validation can never compile
  // a remote $ref or a 10,000-deep schema; refusal is a SchemaAdmissionError (a programming
  // error: the registry admits every schema it accepts).
  #compileArguments(schema: Record<string, unknown>): CompiledArguments {
    let compiled: ValidateFunction | undefined;
    const admission = admitSchema(schema, {}, (document) => {
      compiled = compileOnce(this.#argumentsEngine, closeObjectSchemas(document));
    });
    if (!admission.ok) throw new SchemaAdmissionError(admission.code, admission.message);
    return { validate: compiled!, nullPrototype: schemaNamesPrototypeMember(schema) };
  }

  #compileOutput(schema: Record<string, unknown>): ValidateFunction {
    let compiled: ValidateFunction | undefined;
    const admission = admitSchema(schema, {}, (document) => {
      compiled = compileOnce(this.#outputEngine, document);
    });
    if (!admission.ok) throw new SchemaAdmissionError(admission.code, admission.message);
    return compiled!;
  }
}

/**
 * Compiles, then drops ajv's own reference to the schema: our cache is the only owner of
 * compiled functions, so evicting from it frees them, and two tools whose schemas share an
 * `$id` never collide in the engine. (ajv's `addUsedSchema: false` would avoid the collision
 * too, but then `$ref: "#"` no longer resolves.)
 */
function compileOnce(engine: Ajv2020, schema: Record<string, unknown>): ValidateFunction {
  try {
    return engine.compile(schema);
  } finally {
    engine.removeSchema(schema);
  }
}
