import { hostname } from 'node:os';
import { context, trace } from '@opentelemetry/api';
import { SecretRedactor, VeetbotError } from '@veetbot/domain';
import { pino, type DestinationStream, type Logger as PinoLogger } from 'pino';

/**
 * Structured logs (docs/adr/0069): one JSON object a line, written by pino. Every line has
 * `time` (ISO 8601), `level` (its name), `role`, `msg`; `trace_id` and `span_id` when a span
 * is active (or the fields name the call's trace); `tenant_id`, `run_id`, `step_number` where
 * the line is about one. Nothing secret: every string (the message, each field, an error's
 * message) passes the process's redactor (the values it was told are secret, in every form the
 * redactor knows) and keys that name credentials are censored whatever they hold. An error is
 * logged by its code (a VeetbotError's) or class and the first line of its message, never a
 * stack or a cause chain.
 */
export interface LogFields {
  readonly tenant_id?: string;
  readonly run_id?: string;
  readonly step_number?: number;
  /** A W3C traceparent this line is about (a step's stored one): its trace id becomes `trace_id`. */
  readonly traceparent?: string | null;
  /** The error the line reports: logged as `error: { code, message }`. */
  readonly err?: unknown;
  readonly [key: string]: unknown;
}

export interface Log {
  info(msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /** Write what is buffered (a no-op for the synchronous destinations used here). */
  flush(): void;
}

export type LogFormat = 'json' | 'pretty';

export interface LoggerOptions {
  /** `api`, `worker`, `api+worker`, `cli`: on every line. */
  readonly role: string;
  /** Values never to be written, in any form (a database password, a token, a key). */
  readonly secrets?: readonly string[];
  /** Default: from LOG_FORMAT (`json` | `pretty`), else pretty when stdout is a terminal. */
  readonly format?: LogFormat;
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Info and warnings (default: stdout) and errors (default: stderr); tests pass their own. */
  readonly out?: DestinationStream;
  readonly err?: DestinationStream;
  /** Default: LOG_LEVEL, else info. */
  readonly level?: string;
}

/** Keys that name a credential: their values are censored whatever they are. */
const CENSORED_KEYS = ['authorization', 'api_key', 'apiKey', 'password', 'secret', 'token', 'cookie', 'key'];
const CENSORED = '[redacted]';
const LEVELS = new Set(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent']);

/** The format the environment asks for: LOG_FORMAT, else pretty on a terminal (`pnpm start`), else JSON. */
export function logFormatFrom(env: Readonly<Record<string, string | undefined>>, stdoutIsTty: boolean): LogFormat {
  const asked = env.LOG_FORMAT?.trim().toLowerCase();
  if (asked === 'json' || asked === 'pretty') return asked;
  return stdoutIsTty ? 'pretty' : 'json';
}

/**
 * The process's logger. Pretty output (pino-pretty) is imported only when used (docs/adr/0048):
 * a service's JSON logger does not load it.
 */
export async function createLogger(options: LoggerOptions): Promise<Log> {
  const env = options.env ?? process.env;
  const format = options.format ?? logFormatFrom(env, process.stdout.isTTY === true);
  const redactor = new SecretRedactor();
  for (const secret of options.secrets ?? []) if (secret !== '') redactor.add(secret);
  // The process's own streams, synchronous on Linux for files, pipes and terminals: a start-up
  // error is written before process.exit, and a line is never lost to a crash.
  let out: DestinationStream = options.out ?? process.stdout;
  let err: DestinationStream = options.err ?? process.stderr;
  if (format === 'pretty') {
    const { default: pretty } = await import('pino-pretty');
    const prettyOptions = { sync: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname,role', singleLine: false };
    out = pretty({ ...prettyOptions, destination: out, colorize: options.out === undefined && process.stdout.isTTY === true });
    err = pretty({ ...prettyOptions, destination: err, colorize: options.err === undefined && process.stderr.isTTY === true });
  }
  const askedLevel = (options.level ?? env.LOG_LEVEL ?? 'info').trim().toLowerCase();
  const logger: PinoLogger = pino(
    {
      level: LEVELS.has(askedLevel) ? askedLevel : 'info',
      base: { pid: process.pid, hostname: hostname(), role: options.role },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: CENSORED_KEYS.flatMap((k) => [k, `*.${k}`]), censor: CENSORED },
      mixin: () => activeTraceFields(),
    },
    pino.multistream(
      [
        { level: 'trace', stream: out },
        { level: 'error', stream: err },
      ],
      // Each line to the highest stream its level reaches: errors to stderr only.
      { dedupe: true },
    ),
  );
  const write = (level: 'info' | 'warn' | 'error', msg: string, fields: LogFields | undefined) => {
    try {
      logger[level](clean(fields, redactor), redactor.size === 0 ? msg : redactor.redactText(msg));
    } catch {
      // A log line is never the reason a process fails.
    }
  };
  return {
    info: (msg, fields) => write('info', msg, fields),
    warn: (msg, fields) => write('warn', msg, fields),
    error: (msg, fields) => write('error', msg, fields),
    flush: () => logger.flush(),
  };
}

/** The active span's ids (the mixin: pino adds them to the line unless the fields set their own). */
function activeTraceFields(): Record<string, string> {
  const span = trace.getSpanContext(context.active());
  if (span === undefined || !trace.isSpanContextValid(span)) return {};
  return { trace_id: span.traceId, span_id: span.spanId };
}

function clean(fields: LogFields | undefined, redactor: SecretRedactor): Record<string, unknown> {
  if (fields === undefined) return {};
  const { traceparent, err, ...rest } = fields;
  const out: Record<string, unknown> = redactor.size === 0 ? { ...rest } : redactor.redact({ ...rest });
  const traceId = typeof traceparent === 'string' ? /^00-([0-9a-f]{32})-([0-9a-f]{16})-/.exec(traceparent) : null;
  if (traceId !== null) {
    out.trace_id = traceId[1];
    out.span_id = traceId[2];
  }
  if (err !== undefined) out.error = describeError(err, redactor);
  return out;
}

/** An error as a log line may show it: its code (or class) and its message's first line, redacted. */
export function describeError(error: unknown, redactor: SecretRedactor): { code: string; message: string } {
  const code = VeetbotError.isInstance(error) ? error.code : error instanceof Error ? error.name : 'unknown';
  const text = error instanceof Error ? error.message : typeof error === 'string' ? error : '';
  const first = text.split('\n')[0]!.slice(0, 500);
  return { code, message: redactor.size === 0 ? first : redactor.redactText(first) };
}

/**
 * The messages of a process's JSON log lines (docs/adr/0069), one a line (a multi-line message
 * keeps its lines), for whoever reads what a process said: tests, scripts. A line that is not a
 * JSON log line (another tool's output, a partial line) is kept as it is.
 */
export function logMessages(text: string): string {
  return text
    .split('\n')
    .map((line) => {
      if (!line.startsWith('{')) return line;
      try {
        const parsed = JSON.parse(line) as { msg?: unknown };
        return typeof parsed.msg === 'string' ? parsed.msg : line;
      } catch {
        return line;
      }
    })
    .join('\n');
}
