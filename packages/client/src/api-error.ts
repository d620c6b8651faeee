/**
 * Any answer of the API that is not a success: the HTTP status and the API's stable error
 * code and message (`{ error: { code, message } }`). A response that is not in that shape (a
 * proxy's HTML page, a cut connection) gets the code `client.unexpected_response`.
 */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  /** The Retry-After header in seconds, when the API sent one (503 run.busy, service.unavailable). */
  readonly retryAfterSeconds: number | null;

  constructor(status: number, code: string, message: string, retryAfterSeconds: number | null = null) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  /** 503 and 429 answers are worth retrying after `retryAfterSeconds`. */
  get retryable(): boolean {
    return this.status === 503 || this.status === 429;
  }
}
