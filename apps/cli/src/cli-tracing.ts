import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { startTracingFromEnv } from '@veetbot/telemetry';

/**
 * The CLI role's tracing (docs/adr/0068): on from the same OpenTelemetry environment as the api
 * and worker (off, and nothing of the SDK loaded, when it names no endpoint). The command runs
 * under one root span named by its command words only (never its flags or values, which can
 * carry keys), so an `mcp check`'s round trips are one trace; the spans are exported before
 * the process exits.
 */
export async function withCliTracing(argv: readonly string[], env: NodeJS.ProcessEnv, run: () => Promise<number>): Promise<number> {
  const telemetry = await startTracingFromEnv({ serviceName: 'veetbot-cli', env });
  if (telemetry === null) return run();
  const words = argv.slice(0, 2).filter((w) => /^[a-z][a-z.-]{0,40}$/.test(w));
  const span = trace.getTracer('veetbot.cli').startSpan(['veetbot', ...words].join(' '));
  try {
    const code = await context.with(trace.setSpan(context.active(), span), run);
    if (code !== 0) span.setStatus({ code: SpanStatusCode.ERROR, message: `exit ${code}` });
    return code;
  } catch (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'unknown' });
    throw error;
  } finally {
    span.end();
    await telemetry.shutdown().catch(() => undefined);
  }
}
