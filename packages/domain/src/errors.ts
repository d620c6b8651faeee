/**
 * Typed errors. A `Symbol.for` brand lets `isInstance` survive two copies of this package
 * (STYLE.md, vercel/ai's AISDKError). Every error carries a stable `code` and `retryable`.
 */
const BRAND = Symbol.for('veetbot.error');

export class VeetbotError extends Error {
  readonly [BRAND] = true;
  readonly code: string;
  readonly retryable: boolean;

  constructor(code: string, message: string, options: { retryable?: boolean; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retryable = options.retryable ?? false;
  }

  static isInstance(value: unknown): value is VeetbotError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[BRAND] === true;
  }
}

/** canonicalJson refused a value (§ Argument validation and the canonical form). */
export class CanonicalizationError extends VeetbotError {
  /** JSON Pointer to the offending value. */
  readonly path: string;
  constructor(code: `canonical.${string}`, message: string, path: string) {
    super(code, message);
    this.path = path;
  }
}

/** ToolRegistry.get on a name nobody registered (§ Resolution). */
export class ToolNotFoundError extends VeetbotError {
  readonly toolName: string;
  constructor(toolName: string) {
    super('registry.tool_not_found', 'No tool is registered under this name and version.');
    this.toolName = toolName;
  }
}

/**
 * A registration rule was broken (§ The registry; Hard gate 1). A schema refused at
 * admission keeps its own `schema.*` code, as RegistrationRejection does.
 */
export class RegistrationError extends VeetbotError {
  readonly toolName: string;
  constructor(code: `registry.${string}` | `schema.${string}`, toolName: string, message: string) {
    super(code, message);
    this.toolName = toolName;
  }
}

/** A JSON Schema was refused at admission (§ Argument validation; MCP discovery). */
export class SchemaAdmissionError extends VeetbotError {
  constructor(code: `schema.${string}`, message: string) {
    super(code, message);
  }
}

/** Configuration that cannot be used (policy profiles, operator configuration). */
export class ConfigurationError extends VeetbotError {
  constructor(code: `config.${string}`, message: string) {
    super(code, message);
  }
}
