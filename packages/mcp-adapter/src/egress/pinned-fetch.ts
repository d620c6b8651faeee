import * as http from 'node:http';
import * as https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Readable } from 'node:stream';
import type { EgressDecision } from '@veetbot/ports';
import { EgressRefusedError, McpAdapterError, McpAuthError, NotDispatchedError } from '../errors';
import { LineCapTransform } from '../transport/line-cap';
import { hostOf } from './default-egress-policy';

/** The fetch shape the MCP SDK's HTTP transport accepts. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

export type AllowedEgress = Extract<EgressDecision, { allowed: true }>;

export interface PinnedFetchOptions {
  /** Bytes a response may carry without a newline (a JSON body is one line). */
  readonly maxLineBytes: number;
  /** Headers added to every request, built at the moment of sending (§ Authentication: expiry at use). */
  readonly headers?: () => Promise<Readonly<Record<string, string>>>;
  /** Sees every response's status and headers before the body (the 401 diagnosis). */
  readonly onResponse?: (status: number, headers: Headers) => void;
}

const NULL_BODY_STATUSES = new Set([204, 205, 304]);

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

  readonly fetch: FetchLike = async (input, init = {}) => {
    const url = new URL(String(input));
    if (url.origin !== this.#target.url.origin) {
      throw new EgressRefusedError('egress.host_not_allowed', 'A request left the origin this connection was checked for.');
    }
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, key) => {
      headers[key] = value;
    });
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
    const body = encodeBody(init.body, headers);
    const signal = init.signal ?? undefined;
    signal?.throwIfAborted();
    return this.#send(url, (init.method ?? 'GET').toUpperCase(), headers, body, signal);
  };

  close(): void {
    this.#agent.destroy();
  }

  #send(url: URL, method: string, headers: Record<string, string>, body: Buffer | undefined, signal: AbortSignal | undefined): Promise<Response> {
    const pinned = this.#target;
    const lookup: LookupFunction = (_hostname, options, callback) => {
      if ((options as { all?: boolean }).all === true) (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [{ address: pinned.address, family: pinned.family }]);
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
      ...(signal === undefined ? {} : { signal }),
    });
    return new Promise<Response>((resolve, reject) => {
      let connected = false;
      request.on('socket', (socket) => {
        const ready = secure ? 'secureConnect' : 'connect';
        if (!(socket as { connecting?: boolean }).connecting && (!secure || (socket as { encrypted?: boolean }).encrypted === true)) connected = true;
        else socket.once(ready, () => (connected = true));
      });
      request.on('error', (error) => {
        if (signal?.aborted) return reject(signal.reason);
        // Before the connection stood, the request cannot have left this process.
        reject(connected ? new McpAdapterError('mcp.transport.failed', 'The HTTP exchange failed.', { retryable: true, cause: error }) : new NotDispatchedError('mcp.transport.connect_failed', 'The server could not be reached.', error));
      });
      request.on('response', (response) => {
        const status = response.statusCode ?? 0;
        const responseHeaders = new Headers();
        for (const [key, value] of Object.entries(response.headers)) {
          if (value === undefined) continue;
          for (const v of Array.isArray(value) ? value : [value]) responseHeaders.append(key, v);
        }
        if (status >= 300 && status < 400) {
          response.resume();
          return reject(new EgressRefusedError('egress.redirect_refused', 'The server answered with a redirect; redirects are refused.'));
        }
        if (status < 200 || status > 599) {
          response.resume();
          return reject(new McpAdapterError('mcp.transport.failed', 'The server answered with an invalid HTTP status.', { retryable: true }));
        }
        this.#options.onResponse?.(status, responseHeaders);
        let stream: ReadableStream<Uint8Array> | null = null;
        if (method === 'HEAD' || NULL_BODY_STATUSES.has(status)) {
          response.resume();
        } else {
          const capped = new LineCapTransform(this.#options.maxLineBytes);
          // pipe() does not carry a source's failure to its destination: a connection dropped
          // mid-body (a server that dies while streaming) must error the body, or a reader of an
          // SSE stream would wait for the rest forever.
          const broken = (error?: Error) => capped.destroy(error ?? new McpAdapterError('mcp.transport.failed', 'The connection closed before the response was complete.', { retryable: true }));
          response.once('aborted', () => broken());
          response.once('error', (error) => broken(error));
          response.once('close', () => {
            if (!response.complete) broken();
          });
          stream = Readable.toWeb(response.pipe(capped)) as unknown as ReadableStream<Uint8Array>;
        }
        resolve(new Response(stream, { status, statusText: response.statusMessage ?? '', headers: responseHeaders }));
      });
      request.end(body);
    });
  }
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
