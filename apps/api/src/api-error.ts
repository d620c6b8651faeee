import { VeetbotError } from '@veetbot/domain';

/**
 * An error the API answers with: an HTTP status, a stable code and a message written by the
 * API itself (never a driver's, a tool's or a stack). Serialized as `{ error: { code, message } }`.
 */
export class ApiError extends VeetbotError {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    status: number,
    code: string,
    message: string,
    options: { retryable?: boolean; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(code, message, { retryable: options.retryable ?? false, cause: options.cause });
    this.status = status;
    this.headers = options.headers ?? {};
  }

  static isApiError(value: unknown): value is ApiError {
    return VeetbotError.isInstance(value) && typeof (value as ApiError).status === 'number';
  }
}

/**
 * One answer for "missing" and "another tenant's": row-level security makes the two
 * indistinguishable below the API, and the API keeps them indistinguishable above it.
 */
export const notFound = (): ApiError => new ApiError(404, 'not_found', 'No such resource.');

export const forbiddenScope = (scope: string): ApiError =>
  new ApiError(403, 'auth.scope_missing', `This API key lacks the ${scope} scope.`);

/** `runtime.run_busy` and retryable store failures: the client should retry shortly. */
export const unavailable = (code: string, message: string): ApiError =>
  new ApiError(503, code, message, { retryable: true, headers: { 'Retry-After': '1' } });
