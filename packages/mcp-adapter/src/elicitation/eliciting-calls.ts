import { createHash } from 'node:crypto';
import { canonicalJson } from '@veetbot/domain';
import type { McpElicitation, McpElicitationAnswer, McpElicitationCall, McpElicitationQuestion, SchemaValidator } from '@veetbot/ports';
import { admitElicitation } from './elicitation-request';

/** What an `elicitation/create` is answered with on the wire. */
export type ElicitationReply =
  | { action: 'accept'; content: Record<string, string | number | boolean | string[]> }
  | { action: 'decline' }
  | { action: 'cancel' };

/** The answerer of one adapter: the port that asks, and the validator that admits the form. */
export interface ElicitationResponder {
  readonly port: McpElicitation;
  readonly validator: SchemaValidator;
}

/**
 * Questions one connection may have open at once. A 2026-07-28 server can embed any number of
 * requests in one `input_required` result (the SDK's driver dispatches them together), and a
 * 2025 server can send as many as it likes: past this, each is declined without asking.
 */
export const MAX_OPEN_QUESTIONS = 4;

/** A delay past which setTimeout fires at once (2^31 - 1 ms); a deadline further away waits in steps. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The tools/call requests of one connection that may be asked something (docs/adr/0060), and the
 * answering of a server's `elicitation/create` for them. A 2025 server sends the request on its
 * own, a 2026-07-28 server embeds it in an `input_required` result that the SDK's multi-round
 * driver hands to the same handler; neither says which call it is about over every transport,
 * so the question is put only when exactly one call is in flight on the connection — otherwise
 * it is declined rather than shown to the wrong call's run. The connection belongs to one
 * session of one tenant, so an ambiguous case never crosses a tenant either way.
 */
export class ElicitingCalls {
  readonly #responder: ElicitationResponder;
  readonly #redact: <T>(value: T) => T;
  readonly #inflight = new Map<number, { readonly call: McpElicitationCall; readonly signal: AbortSignal | undefined }>();
  #next = 0;
  #open = 0;

  /** `redact`: the connection's scrubber — a server that echoes its credential into a question shows it to no one (ADR 0018). */
  constructor(responder: ElicitationResponder, redact: <T>(value: T) => T) {
    this.#responder = responder;
    this.#redact = redact;
  }

  /** Run `work` (the tools/call request) with `call` askable while it is in flight. */
  async during<T>(call: McpElicitationCall | undefined, signal: AbortSignal | undefined, work: () => Promise<T>): Promise<T> {
    if (call === undefined) return work();
    const id = this.#next++;
    this.#inflight.set(id, { call, signal });
    try {
      return await work();
    } finally {
      this.#inflight.delete(id);
    }
  }

  /** The handler of `elicitation/create`: never throws, always a reply the protocol allows. */
  async answer(params: unknown, requestSignal: AbortSignal | undefined): Promise<ElicitationReply> {
    if (this.#inflight.size !== 1) return { action: 'decline' };
    const [{ call, signal: callSignal }] = [...this.#inflight.values()] as [
      { readonly call: McpElicitationCall; readonly signal: AbortSignal | undefined },
    ];
    if (this.#open >= MAX_OPEN_QUESTIONS) return { action: 'decline' };
    const admission = admitElicitation(this.#redact(params), this.#responder.validator);
    if (!admission.ok) return { action: 'decline' };
    this.#open++;
    try {
      return await this.#ask(call, callSignal, requestSignal, admission.question);
    } finally {
      this.#open--;
    }
  }

  async #ask(
    call: McpElicitationCall,
    callSignal: AbortSignal | undefined,
    requestSignal: AbortSignal | undefined,
    question: McpElicitationQuestion,
  ): Promise<ElicitationReply> {
    const remaining = call.deadlineAt.getTime() - Date.now();
    if (remaining <= 0) return { action: 'cancel' };

    // The wait ends at the call's deadline, when the call is cancelled, or when the server
    // withdraws its request (notifications/cancelled): whichever is first answers `cancel`.
    const stop = new AbortController();
    const onAbort = () => stop.abort();
    callSignal?.addEventListener('abort', onAbort, { once: true });
    requestSignal?.addEventListener('abort', onAbort, { once: true });
    if (callSignal?.aborted === true || requestSignal?.aborted === true) stop.abort();
    let timer: NodeJS.Timeout | undefined;
    const armTimer = () => {
      const left = call.deadlineAt.getTime() - Date.now();
      if (left <= 0) return stop.abort();
      timer = setTimeout(armTimer, Math.min(left, MAX_TIMER_MS));
      timer.unref();
    };
    armTimer();
    try {
      const asked = this.#responder.port.ask(call, question, stop.signal);
      const stopped = new Promise<'stopped'>((resolve) => {
        if (stop.signal.aborted) resolve('stopped');
        stop.signal.addEventListener('abort', () => resolve('stopped'), { once: true });
      });
      const answer = await Promise.race([asked, stopped]);
      // The answer that lost the race is not used; a rejection after it is not unhandled.
      asked.catch(() => undefined);
      if (answer === 'stopped' || stop.signal.aborted) return { action: 'cancel' };
      return this.#reply(call, question, answer);
    } catch {
      return { action: 'cancel' };
    } finally {
      clearTimeout(timer);
      stop.abort();
      callSignal?.removeEventListener('abort', onAbort);
      requestSignal?.removeEventListener('abort', onAbort);
    }
  }

  /** An accepted answer must fit the form; the server's defaults fill what it leaves out (SEP-1034). */
  #reply(call: McpElicitationCall, question: McpElicitationQuestion, answer: McpElicitationAnswer): ElicitationReply {
    if (answer.action === 'decline' || answer.action === 'cancel') return { action: answer.action };
    if (answer.action !== 'accept') return { action: 'decline' };
    const version = createHash('sha256').update(canonicalJson(question.requestedSchema)).digest('hex');
    const verdict = this.#responder.validator.validateArguments(
      { toolName: `${call.toolName}#elicitation`, toolVersion: version },
      question.requestedSchema,
      answer.content,
    );
    if (!verdict.valid) return { action: 'decline' };
    return { action: 'accept', content: verdict.value as Record<string, string | number | boolean | string[]> };
  }
}
