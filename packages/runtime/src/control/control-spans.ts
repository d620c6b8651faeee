import { SpanStatusCode, trace } from '@opentelemetry/api';
import { VeetbotError } from '@veetbot/domain';

/** The instrumentation scope of the runtime's control-tool spans. */
export const RUNTIME_TRACER_NAME = 'veetbot.runtime';

/**
 * § Control tools, spans: what happens outside tool.execute — an answer resuming a question
 * (`conversation.answer`), a child run starting (`delegate.child.start`) and joining its parent
 * (`delegate.join`). Identity only: run and invocation ids, never a question, answer or result.
 */
export const CONTROL_SPAN_NAMES = {
  answer: 'conversation.answer',
  childStart: 'delegate.child.start',
  join: 'delegate.join',
} as const;

export function inControlSpan<T>(
  name: (typeof CONTROL_SPAN_NAMES)[keyof typeof CONTROL_SPAN_NAMES],
  attributes: Readonly<Record<string, string>>,
  work: () => Promise<T>,
): Promise<T> {
  return trace.getTracer(RUNTIME_TRACER_NAME).startActiveSpan(name, { attributes: { ...attributes } }, async (span) => {
    try {
      return await work();
    } catch (error) {
      span.setStatus({
        code: SpanStatusCode.ERROR,
        message: VeetbotError.isInstance(error) ? error.code : error instanceof Error ? error.name : 'unknown',
      });
      throw error;
    } finally {
      span.end();
    }
  });
}
