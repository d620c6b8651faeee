import { AsyncLocalStorage } from 'node:async_hooks';
import * as http from 'node:http';
import * as https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { VeetbotError } from '@veetbot/domain';
import type { EgressDecision } from '@veetbot/ports';
import {
  EgressRefusedError,
  McpAdapterError,
  McpAuthError,
  NotDispatchedError,
  ParamHeadersTooLargeError,
  type ResponseTooLargeError,
} from '../errors';
import { IDEMPOTENCY_KEY_HEADER, idempotencyKeyOf } from '../connection/idempotency-key';
import { hostOf } from './default-egress-policy';
import { MessageSizeCap, responseBody } from './response-body';
import { traceHeaders } from '../connection/trace-propagation';

/** The fetch shape the MCP SDK's HTTP transport accepts. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

export type AllowedEgress = Extract<EgressDecision, { allowed: true }>;

export interface PinnedFetchOptions {
  /** Bytes one message of a response may carry: a whole JSON body, or one SSE event. */
  readonly maxLineBytes: number;
  /** Headers added to every request, built at the moment of sending (§ Authentication: expiry at use). */
  readonly headers?: () => Promise<Readonly<Record<string, string>>>;
  /** Sees every response's status and headers before the body (the 401 diagnosis). */
  readonly onResponse?: (status: number, headers: Headers) => void;
  /**
   * An SSE event over the cap. The SDK reports a failed SSE stream only as text, and closes the
   * connection; this names the cause. (A JSON body over the cap fails its own request with the
   * error itself.)
   */
  readonly onEventTooLarge?: (error: ResponseTooLargeError) => void;
  /**
   * A 3xx is handed back (its body dropped) instead of refused, for a caller that re-checks the
   * Location against the egress policy itself before any hop (auth/oauth-fetch.ts, docs/adr/0077).
   * Never set for an MCP server's own connection: its redirects stay refused.
   */
  readonly passRedirects?: boolean;
}

const NULL_BODY_STATUSES = new Set([204, 205, 304]);

/**
 * SEP-2243's Mcp-Param-* headers of one request, names and values together: a tenant's argument
 * the server marked with x-mcp-header travels in a header, and servers and proxies commonly
 * refuse a request whose headers pass 8–16 KB (431) — after the request has gone. Refused here
 * first, before anything is sent (docs/adr/0064).
 */
export const PARAM_HEADERS_MAX_BYTES = 8 * 1024;
const PARAM_HEADER_PREFIX = 'mcp-param-';

/**
 * The output ceiling of the call whose request is being sent (§ Output: maximum_output_bytes ×
 * 4; docs/adr/0025). The SDK gives a fetch no way to tell which call a request belongs to, and
 * assigns the JSON-RPC id itself; but it sends a request synchronously inside `request()`, so
 * the connection runs that inside `withCallCeiling` and the fetch the send makes reads it here.
 */
const callCeiling = new AsyncLocalStorage<number>();

/** Runs `send` so that the HTTP request it makes reads its response body at most `ceilingBytes`. */
export function withCallCeiling<T>(ceilingBytes: number | undefined, send: () => T): T {
  return ceilingBytes === undefined ? send() : callCeiling.run(ceilingBytes, send);
}

type JsonRpcId = string | number;

/** One request, from the fetch call until its response has ended (or it failed). */
interface Exchange {
  /** This request's own signal: what node:http listens on, aborted by the caller's signal. */
  readonly controller: AbortController;
  readonly callerSignal: AbortSignal | undefined;
  /** The JSON-RPC id of the request the body carries, when it is one request. */
  readonly requestId: JsonRpcId | undefined;
  /** Ends the response body cleanly and drops the connection; set once the response arrived. */
  endResponse: (() => void) | undefined;
  /** The call's output ceiling over this whole response body, when a call's request made it. */
  readonly ceilingBytes: number | undefined;
}

/**
 * RULINGS.md "Egress", the connecting half: every request of this client goes to the address
 * the policy checked (a custom `lookup`, so the Host header, SNI and certificate check still
 * use the original name) — a DNS answer that changes after the check cannot redirect it.
 * Redirects are refused, never followed. Ambient HTTP(S)_PROXY variables are not read: the
 * request is made with node:http itself, which has no proxy support to turn on.
 */
export class PinnedHttpClient {
  readonly #target: AllowedEgress;
  readonly #host: string;
  readonly #options: PinnedFetchOptions;
  readonly #agent: http.Agent;
  readonly #open = new Set<Exchange>();
  readonly #byRequestId = new Map<JsonRpcId, Exchange>();
  /** The exchanges each caller signal covers, and the one listener that aborts them all. */
  readonly #bySignal = new Map<AbortSignal, { readonly exchanges: Set<Exchange>; readonly onAbort: () => void }>();

  constructor(target: AllowedEgress, options: PinnedFetchOptions) {
    this.#target = target;
    this.#host = hostOf(target.url);
    this.#options = options;
    this.#agent = target.url.protocol === 'https:' ? new https.Agent({ keepAlive: true }) : new http.Agent({ keepAlive: true });
  }

  /** The checked address every request goes to. */
  get address(): string {
    return this.#target.address;
  }

  /** Requests made or being made whose response has not ended: a standing SSE stream is one. */
  get openRequests(): number {
    return this.#open.size;
  }

  readonly fetch: FetchLike = async (input, init = {}) => {
    const url = new URL(String(input));
    if (url.origin !== this.#target.url.origin) {
      throw new EgressRefusedError('egress.host_not_allowed', 'A request left the origin this connection was checked for.');
    }
    const message = jsonRpcMessage(init.body);
    // The SDK answers a timed-out or aborted request with notifications/cancelled and forgets
    // it, but leaves that request's SSE response open, and the server never ends it (a
    // cancelled request gets no response). End it here, or each one holds a connection for
    // the session's life (§ Where a server may live: the adapter owns the transport).
    if (message?.method === 'notifications/cancelled') this.#cancel(cancelledRequestId(message));
    const exchange = this.#begin(init.signal ?? undefined, typeof message?.method === 'string' ? requestIdOf(message) : undefined);
    let body: Buffer | undefined;
    const headers: Record<string, string> = {};
    try {
      let paramBytes = 0;
      new Headers(init.headers).forEach((value, key) => {
        headers[key] = value;
        if (key.startsWith(PARAM_HEADER_PREFIX)) paramBytes += key.length + value.length + 4;
      });
      if (paramBytes > PARAM_HEADERS_MAX_BYTES) throw new ParamHeadersTooLargeError(PARAM_HEADERS_MAX_BYTES);
      // docs/adr/0068: the traced request's traceparent/tracestate, beside its params._meta.
      Object.assign(headers, traceHeaders());
      if (this.#options.headers !== undefined) {
        let built: Readonly<Record<string, string>>;
        try {
          built = await this.#options.headers();
        } catch (error) {
          // The credential could not be presented (a token exchange failed at use): nothing was
          // sent. An auth rejection keeps its own type; anything else is "not dispatched".
          if (error instanceof McpAuthError) throw error;
          throw new NotDispatchedError('mcp.transport.connect_failed', 'The credential could not be prepared for the request.', error);
        }
        for (const [key, value] of Object.entries(built)) headers[key.toLowerCase()] = value;
      }
      // docs/adr/0066: a tools/call's key, from the body it travels with (so only on its own POST).
      const key = init.method?.toUpperCase() === 'POST' ? idempotencyKeyOf(message) : null;
      if (key !== null) headers[IDEMPOTENCY_KEY_HEADER] = key;
      body = encodeBody(init.body, headers);
      exchange.controller.signal.throwIfAborted();
    } catch (error) {
      this.#release(exchange);
      throw error;
    }
    return this.#send(url, (init.method ?? 'GET').toUpperCase(), headers, body, exchange);
  };

  close(): void {
    this.#agent.destroy();
  }

  /**
   * Each request gets its own signal: the SDK passes one transport-wide signal with every
   * request, and node:http would hang a listener per request on it (a false
   * MaxListenersExceededWarning at ten in flight). The caller's signal carries one listener
   * however many are in flight, and none once they have all ended. Not AbortSignal.any, which
   * would keep a dependant per request on the long-lived signal.
   */
  #begin(callerSignal: AbortSignal | undefined, requestId: JsonRpcId | undefined): Exchange {
    const exchange: Exchange = {
      controller: new AbortController(),
      callerSignal,
      requestId,
      endResponse: undefined,
      ceilingBytes: callCeiling.getStore(),
    };
    this.#open.add(exchange);
    if (requestId !== undefined) this.#byRequestId.set(requestId, exchange);
    if (callerSignal?.aborted === true) {
      exchange.controller.abort(callerSignal.reason);
    } else if (callerSignal !== undefined) {
      let group = this.#bySignal.get(callerSignal);
      if (group === undefined) {
        const exchanges = new Set<Exchange>();
        const onAbort = () => {
          for (const each of [...exchanges]) each.controller.abort(callerSignal.reason);
        };
        group = { exchanges, onAbort };
        this.#bySignal.set(callerSignal, group);
        callerSignal.addEventListener('abort', onAbort, { once: true });
      }
      group.exchanges.add(exchange);
    }
    return exchange;
  }

  /** The request has closed (or was never made): forget it. */
  #release(exchange: Exchange): void {
    if (!this.#open.delete(exchange)) return;
    if (exchange.requestId !== undefined && this.#byRequestId.get(exchange.requestId) === exchange)
      this.#byRequestId.delete(exchange.requestId);
    const signal = exchange.callerSignal;
    const group = signal === undefined ? undefined : this.#bySignal.get(signal);
    if (signal === undefined || group === undefined) return;
    group.exchanges.delete(exchange);
    if (group.exchanges.size > 0) return;
    signal.removeEventListener('abort', group.onAbort);
    this.#bySignal.delete(signal);
  }

  /**
   * The caller gave up on request `requestId`. Its response ends as a clean end of stream, not
   * a failure: a failed body is the SDK's "SSE stream disconnected", which closes the whole
   * connection (mcp-connection's onerror), and only this one request is over. A request still
   * being prepared or awaiting its response headers is aborted instead; the SDK has already
   * settled the call, so that rejection goes nowhere but the transport's onerror.
   */
  #cancel(requestId: JsonRpcId | undefined): void {
    if (requestId === undefined) return;
    const exchange = this.#byRequestId.get(requestId);
    if (exchange === undefined) return;
    this.#byRequestId.delete(requestId);
    if (exchange.endResponse !== undefined) exchange.endResponse();
    else exchange.controller.abort(new DOMException('The request was cancelled.', 'AbortError'));
  }

  #send(url: URL, method: string, headers: Record<string, string>, body: Buffer | undefined, exchange: Exchange): Promise<Response> {
    const signal = exchange.controller.signal;
    const pinned = this.#target;
    const lookup: LookupFunction = (_hostname, options, callback) => {
      if ((options as { all?: boolean }).all === true)
        (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
          { address: pinned.address, family: pinned.family },
        ]);
      else callback(null, pinned.address, pinned.family);
    };
    const secure = url.protocol === 'https:';
    const request = (secure ? https.request : http.request)({
      protocol: url.protocol,
      hostname: this.#host,
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method,
      headers: body === undefined ? headers : { ...headers, 'content-length': String(body.length) },
      agent: this.#agent,
      ...(isIP(this.#host) === 0 ? { lookup } : {}),
      signal,
    });
    // Closed once the response has ended, failed or been dropped — with it, node:http's own
    // listener on `signal` goes.
    request.once('close', () => this.#release(exchange));
    return new Promise<Response>((resolve, reject) => {
      let connected = false;
      request.on('socket', (socket) => {
        const ready = secure ? 'secureConnect' : 'connect';
        if (!(socket as { connecting?: boolean }).connecting && (!secure || (socket as { encrypted?: boolean }).encrypted === true))
          connected = true;
        else socket.once(ready, () => (connected = true));
      });
      request.on('error', (error) => {
        if (signal.aborted) return reject(signal.reason);
        // Before the connection stood, the request cannot have left this process.
        reject(
          connected
            ? new McpAdapterError('mcp.transport.failed', 'The HTTP exchange failed.', { retryable: true, cause: error })
            : new NotDispatchedError('mcp.transport.connect_failed', 'The server could not be reached.', error),
        );
      });
      request.on('response', (response) => {
        // Anything a hostile response makes throw here (a header or status text the fetch
        // types refuse) would be thrown from an event handler — an uncaught exception. It
        // fails this one request instead.
        try {
          resolve(this.#toResponse(request, response, method, exchange));
        } catch (error) {
          request.destroy();
          reject(
            VeetbotError.isInstance(error)
              ? error
              : new McpAdapterError('mcp.transport.failed', 'The server answered with a response that could not be read.', {
                  retryable: true,
                  cause: error,
                }),
          );
        }
      });
      request.end(body);
    });
  }

  /** The response as a fetch Response; throws for a redirect or a response it cannot carry. */
  #toResponse(request: http.ClientRequest, response: http.IncomingMessage, method: string, exchange: Exchange): Response {
    const status = response.statusCode ?? 0;
    if (status >= 300 && status < 400) {
      // The redirect's body is unwanted, however long the server makes it: the connection goes.
      request.destroy();
      if (this.#options.passRedirects === true) {
        const location = response.headers.location;
        return new Response(null, { status, headers: typeof location === 'string' ? { location } : {} });
      }
      throw new EgressRefusedError('egress.redirect_refused', 'The server answered with a redirect; redirects are refused.');
    }
    if (status < 200 || status > 599) {
      request.destroy();
      throw new McpAdapterError('mcp.transport.failed', 'The server answered with an invalid HTTP status.', { retryable: true });
    }
    const responseHeaders = new Headers();
    for (const [key, value] of Object.entries(response.headers)) {
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(key, v);
    }
    this.#options.onResponse?.(status, responseHeaders);
    let stream: ReadableStream<Uint8Array> | null = null;
    if (method === 'HEAD' || NULL_BODY_STATUSES.has(status)) {
      response.resume();
    } else {
      // A JSON body is one message; an SSE stream is bounded per event (response-body.ts).
      const perEvent = /^\s*text\/event-stream\b/i.test(responseHeaders.get('content-type') ?? '');
      const body = responseBody(
        response,
        request,
        new MessageSizeCap(this.#options.maxLineBytes, perEvent, exchange.ceilingBytes),
        perEvent ? this.#options.onEventTooLarge : undefined,
      );
      exchange.endResponse = body.end;
      stream = body.stream;
    }
    return new Response(stream, { status, statusText: response.statusMessage ?? '', headers: responseHeaders });
  }
}

/** The body as one JSON-RPC message object, when it is one (a batch or another body: null). */
function jsonRpcMessage(body: RequestInit['body']): Record<string, unknown> | null {
  // The SDK sends each message as a JSON string; a form body (a token exchange) is not parsed.
  if (typeof body !== 'string' || !body.startsWith('{')) return null;
  try {
    const parsed: unknown = JSON.parse(body);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

function isJsonRpcId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

function requestIdOf(message: Record<string, unknown>): JsonRpcId | undefined {
  return isJsonRpcId(message.id) ? message.id : undefined;
}

function cancelledRequestId(message: Record<string, unknown>): JsonRpcId | undefined {
  const params = message.params;
  if (typeof params !== 'object' || params === null) return undefined;
  const requestId = (params as Record<string, unknown>).requestId;
  return isJsonRpcId(requestId) ? requestId : undefined;
}

function encodeBody(body: RequestInit['body'], headers: Record<string, string>): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body, 'utf8');
  if (body instanceof URLSearchParams) {
    headers['content-type'] ??= 'application/x-www-form-urlencoded;charset=UTF-8';
    return Buffer.from(body.toString(), 'utf8');
  }
  if (body instanceof ArrayBuffer) return Buffer.from(body);
  if (ArrayBuffer.isView(body)) return Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  throw new McpAdapterError('mcp.transport.body_unsupported', 'This request body type is not supported.');
}
