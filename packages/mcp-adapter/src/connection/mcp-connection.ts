import type { Client, ProtocolError, Transport } from '@modelcontextprotocol/client';
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import { SecretRedactor, VeetbotError } from '@veetbot/domain';
import type {
  CredentialResolver,
  EgressPolicy,
  McpDelegatedAuthorization,
  McpElicitationCall,
  McpGrantOwner,
  ToolMetrics,
} from '@veetbot/ports';
import { DelegatedFetch } from '../auth/delegated-fetch';
import { DelegatedGrant, type PreRegisteredClient } from '../auth/delegated-grant';
import { createOAuthFetch, OAUTH_MAX_RESPONSE_BYTES } from '../auth/oauth-fetch';
import { CredentialState, type ReauthenticationOutcome } from '../auth/credential-state';
import { stdioCommand } from '../config/command-line';
import { effectiveTimeouts, type EffectiveTimeouts, type McpServerConfig } from '../config/server-config';
import { PinnedHttpClient, withCallCeiling } from '../egress/pinned-fetch';
import { ElicitingCalls, type ElicitationResponder } from '../elicitation/eliciting-calls';
import {
  CapabilityRequiredError,
  EgressRefusedError,
  isOversizeError,
  LineTooLongError,
  McpAdapterError,
  McpAuthError,
  McpAuthorizationError,
  NotDispatchedError,
  type ResponseTooLargeError,
} from '../errors';
import { callParams } from './idempotency-key';
import { isProtocolError, isSdkError, isSdkHttpError, isStreamableHttpTransport, loadMcpSdk, type McpSdk } from '../sdk';
import { traceRequest, type RequestTelemetry } from '../telemetry';
import { StdioServerTransport } from '../transport/stdio-server-transport';
import { traceCarrier, withTraceHeaders, withTraceMeta } from './trace-propagation';
import { assumeCompleteResults } from './result-type-default';
import {
  LooseCallTool,
  LooseGetPrompt,
  LooseListPrompts,
  LooseListResources,
  LooseListTools,
  LooseReadResource,
  type LooseCallToolResult,
} from './result-schemas';

export const CLIENT_INFO = { name: 'veetbot', version: '0.1.0' } as const;

/** SSE resumption (docs/adr/0059): attempts per closed stream, and the longest wait before one. */
export const RESUME_ATTEMPTS = 3;
export const RESUME_MAX_DELAY_MS = 10_000;

/** 2026-07-28 `input_required` rounds one call may take before it fails (docs/adr/0060). */
export const INPUT_REQUIRED_MAX_ROUNDS = 4;

/** Pages and entries a listing may hold: a server cannot make discovery unbounded. */
const MAX_PAGES = 100;
const MAX_LIST_ENTRIES = 5_000;

export interface ConnectionDeps {
  readonly credentials: CredentialResolver;
  readonly egress: EgressPolicy;
  readonly now: () => Date;
  readonly maxLineBytes: number;
  readonly stderrMaxBytes: number;
  /** § Spans and metrics: mcp_requests_total per round trip; absent, nothing is counted. */
  readonly metrics?: ToolMetrics | undefined;
  /**
   * Who answers a server's form elicitation (docs/adr/0060). Present: the client advertises
   * `elicitation: { form: {} }` and answers through it; absent: no capability, and the SDK
   * refuses the request (-32601) as before.
   */
  readonly elicitation?: ElicitationResponder | undefined;
  /**
   * docs/adr/0077: the platform's side of delegated authorization, and whose grant this
   * connection uses. Present: an HTTP server with auth_scheme none that answers 401 with
   * resource metadata is authorized through it; absent, it fails tool.auth_unsupported.
   */
  readonly delegated?: { readonly port: McpDelegatedAuthorization; readonly owner: McpGrantOwner } | undefined;
}

export interface OpenOptions {
  /** The handshake deadline; capacity waiting is already behind us (ADR-0131). */
  readonly connectTimeoutMs?: number;
  readonly signal?: AbortSignal;
  /** notifications/tools/list_changed arrived. */
  readonly onToolsListChanged?: () => void;
  /** The connection closed without being asked to (a dropped server, a line over the cap). */
  readonly onUnexpectedClose?: (reasonCode: string) => void;
}

export interface ServerCapabilities {
  readonly tools: boolean;
  readonly resources: boolean;
  readonly prompts: boolean;
}

/** Whether a failed request may have left this process (step 11's `dispatched`). */
export function wasDispatched(error: unknown): boolean {
  return !NotDispatchedError.is(error);
}

/** The HTTP status the server refused a request with (the SDK's SdkHttpError), if it did. */
export function httpStatusOf(error: unknown): number | null {
  return isSdkHttpError(error) ? error.status : null;
}

/** A 401 from the server's HTTP endpoint. */
export function isUnauthorized(error: unknown): boolean {
  return httpStatusOf(error) === 401;
}

/** The SDK's own timer ended the request (2.x: a local SdkError, never a JSON-RPC code). */
export function isRequestTimeout(error: unknown): boolean {
  return isSdkError(error, 'RequestTimeout');
}

/** The connection closed under the request. */
export function isConnectionClosed(error: unknown): boolean {
  return isSdkError(error, 'ConnectionClosed');
}

/**
 * The server answered the request with a JSON-RPC error (it was received and refused). In the
 * 2.x SDK a ProtocolError is what crosses the wire; timeouts and closes are SdkErrors.
 */
export function isJsonRpcError(error: unknown): error is ProtocolError {
  return isProtocolError(error);
}

/**
 * The stable code for a connection that could not be made: the auth outcomes and the
 * capability refusal are their own; everything else is the server being unreachable.
 */
export function connectReasonCode(error: unknown): string {
  if (
    VeetbotError.isInstance(error) &&
    (error.code === 'tool.auth_failed' || error.code === 'tool.auth_unsupported' || error.code === 'mcp.capability_required')
  )
    return error.code;
  // docs/adr/0077: a refused authorization flow is an authentication failure; the mcp.auth.* code is its detail.
  if (error instanceof McpAuthorizationError) return 'tool.auth_failed';
  // The server answered (initialize, or a listing during discovery) with a JSON-RPC error: it
  // is reachable and refused; that is an upstream error, not an unreachable server (docs/adr/0059).
  if (jsonRpcErrorIn(error) !== null) return 'tool.upstream_error';
  // So is a listing the SDK refuses (at 2026-07-28 its codec reads every page strictly: docs/adr/0064).
  if (invalidResultIn(error)) return 'tool.upstream_error';
  return 'tool.server_unreachable';
}

/** The SDK refused a result the server sent (SdkError InvalidResult), or a failure wraps one. */
function invalidResultIn(error: unknown): boolean {
  let at: unknown = error;
  for (let depth = 0; depth < 4 && typeof at === 'object' && at !== null; depth++) {
    if (isSdkError(at, 'InvalidResult')) return true;
    at = (at as { cause?: unknown }).cause;
  }
  return false;
}

/** The JSON-RPC error a failure is, or wraps (the handshake wraps it once), if any. */
function jsonRpcErrorIn(error: unknown): ProtocolError | null {
  let at: unknown = error;
  for (let depth = 0; depth < 4 && typeof at === 'object' && at !== null; depth++) {
    if (isProtocolError(at)) return at;
    at = (at as { cause?: unknown }).cause;
  }
  return null;
}

/**
 * The operator-facing detail of a connection that could not be made (docs/adr/0056), beside its
 * reason code: the code stays `tool.server_unreachable` with its one fixed message, and this says
 * whether the egress policy refused the dial, the host name did not resolve, or nothing answered.
 * Built from the egress decision's own code and fixed message and the socket's error code only —
 * never the resolved address, the policy's switches or anything the server said. Null when the
 * reason code says it all.
 */
export function connectFailureDetail(error: unknown): string | null {
  if (error instanceof McpAuthorizationError) return `Authorization: ${error.code}: ${error.message}`;
  if (error instanceof EgressRefusedError) {
    return error.code === 'egress.resolve_failed'
      ? `DNS: the server's host name did not resolve (${error.code}).`
      : `Egress: the egress policy refused the connection (${error.code}: ${error.message})`;
  }
  // Its code only: the server's message is the server's text, never an operator-facing detail.
  const rpc = jsonRpcErrorIn(error);
  if (rpc !== null) return `The server answered with JSON-RPC error ${Number.isSafeInteger(rpc.code) ? rpc.code : 'with no valid code'}.`;
  if (invalidResultIn(error)) return 'The server answered with a result that is not valid at the negotiated protocol revision.';
  // The SDK wraps what our fetch threw during the handshake: follow the causes a few steps.
  let at: unknown = error;
  for (let depth = 0; depth < 4 && typeof at === 'object' && at !== null; depth++) {
    if (VeetbotError.isInstance(at) && at.code === 'mcp.transport.connect_failed') {
      const cause = (at as { cause?: unknown }).cause;
      const errno = typeof cause === 'object' && cause !== null ? (cause as { code?: unknown }).code : undefined;
      return typeof errno === 'string' && /^E[A-Z]{2,15}$/.test(errno)
        ? `The connection to the server could not be made (${errno}).`
        : 'The connection to the server could not be made.';
    }
    at = (at as { cause?: unknown }).cause;
  }
  return null;
}

/**
 * One live MCP session with one server: an SDK Client over our transport, the credential that
 * belongs to it, and its bookkeeping (in-flight calls, the idle clock). The SDK adapter owns the
 * transport's whole lifetime: opened here, closed here (§ Where a server may live).
 */
export class McpConnection {
  readonly config: McpServerConfig;
  readonly timeouts: EffectiveTimeouts;
  readonly capabilities: ServerCapabilities;
  readonly credential: CredentialState;
  readonly scrubber: SecretRedactor;
  readonly connectedAt: Date;
  lastUsedAt: number;
  inflight = 0;
  readonly #client: Client;
  readonly #transport: Transport;
  readonly #http: PinnedHttpClient | null;
  readonly #telemetry: RequestTelemetry;
  /** An SSE event over the cap, once one arrived: it closes the connection (the pinned client reports it). */
  readonly #oversize: { readonly error: ResponseTooLargeError | null };
  readonly #eliciting: ElicitingCalls | null;
  #closed = false;
  #closing: Promise<void> | null = null;

  private constructor(args: {
    config: McpServerConfig;
    client: Client;
    transport: Transport;
    http: PinnedHttpClient | null;
    credential: CredentialState;
    scrubber: SecretRedactor;
    connectedAt: Date;
    telemetry: RequestTelemetry;
    oversize: { readonly error: ResponseTooLargeError | null };
    eliciting: ElicitingCalls | null;
  }) {
    this.config = args.config;
    this.timeouts = effectiveTimeouts(args.config);
    this.#client = args.client;
    this.#transport = args.transport;
    this.#http = args.http;
    this.credential = args.credential;
    this.scrubber = args.scrubber;
    this.connectedAt = args.connectedAt;
    this.#telemetry = args.telemetry;
    this.#oversize = args.oversize;
    this.#eliciting = args.eliciting;
    // The idle clock is wall time (the sweep's), not the injected clock of credentials and events.
    this.lastUsedAt = Date.now();
    const caps = args.client.getServerCapabilities() ?? {};
    this.capabilities = { tools: caps.tools !== undefined, resources: caps.resources !== undefined, prompts: caps.prompts !== undefined };
  }

  /**
   * Connect and initialize. The client advertises no capabilities at all — in particular
   * neither sampling nor roots (§ Sampling and roots are refused: "declining at negotiation
   * rather than at request time means a server never gets to try"); a server request for either
   * is answered with a JSON-RPC error by the SDK. Throws typed errors: McpAuthError,
   * CapabilityRequiredError, NotDispatchedError, EgressRefusedError, McpAdapterError.
   */
  static async open(config: McpServerConfig, deps: ConnectionDeps, options: OpenOptions = {}): Promise<McpConnection> {
    // docs/adr/0048: the SDK is imported by the first connection, not by the process's start;
    // before the handshake's timer, which is the server's time, not the module load's.
    const sdk = await loadMcpSdk();
    const timeouts = effectiveTimeouts(config);
    const connectTimeoutMs = options.connectTimeoutMs ?? timeouts.connectMs;
    const scrubber = new SecretRedactor();
    const credential = new CredentialState(config, {
      credentials: deps.credentials,
      egress: deps.egress,
      now: deps.now,
      requestTimeoutMs: Math.min(timeouts.requestMs, connectTimeoutMs),
      maxLineBytes: deps.maxLineBytes,
      redactor: scrubber,
    });
    // One controller per handshake (not AbortSignal.any over a long-lived signal, which would
    // collect a dependant per connect): the deadline or the owner's stop aborts it.
    const controller = new AbortController();
    // A TimeoutError reason: the initialize round trip it cuts short is counted as `timeout`,
    // while the owner's stop (shutdown) is `cancelled`.
    const timer = setTimeout(
      () => controller.abort(new DOMException('The handshake did not complete in time.', 'TimeoutError')),
      connectTimeoutMs,
    );
    const onStop = () => controller.abort();
    options.signal?.addEventListener('abort', onStop, { once: true });
    try {
      return await McpConnection.#handshake(sdk, config, deps, options, connectTimeoutMs, controller.signal, scrubber, credential);
    } finally {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onStop);
    }
  }

  static async #handshake(
    { Client, StreamableHTTPClientTransport }: McpSdk,
    config: McpServerConfig,
    deps: ConnectionDeps,
    options: OpenOptions,
    connectTimeoutMs: number,
    signal: AbortSignal,
    scrubber: SecretRedactor,
    credential: CredentialState,
  ): Promise<McpConnection> {
    const started = Date.now();
    await raceSignal(credential.establish(), signal);

    let http: PinnedHttpClient | null = null;
    let transport: Transport;
    let challenge: { resourceMetadata: boolean } | null = null;
    const oversize: { error: ResponseTooLargeError | null } = { error: null };
    if (config.transport === 'http') {
      const decision = await raceSignal(deps.egress.check(config.endpoint), signal);
      if (!decision.allowed) throw new EgressRefusedError(decision.code, decision.message);
      http = new PinnedHttpClient(decision, {
        maxLineBytes: deps.maxLineBytes,
        headers: () => credential.headers(),
        onResponse: (status, headers) => {
          if (status === 401) challenge = { resourceMetadata: /resource_metadata\s*=/i.test(headers.get('www-authenticate') ?? '') };
        },
        // The SDK then reports only "SSE stream disconnected" and the connection closes: the
        // calls that stream carried end with this instead (ADR 0021).
        onEventTooLarge: (error) => {
          oversize.error = error;
        },
      });
      // A stream the server closes gracefully before its answer (the standing GET stream, or a
      // POST response that sent an event id first) is resumed as the transport section says: a
      // GET with Last-Event-ID after the server's `retry` (docs/adr/0059, SEP-1699) — the SDK's
      // own resumption, bounded: RESUME_ATTEMPTS tries per stream, each delay (the server's
      // `retry` included) at most RESUME_MAX_DELAY_MS, all of it through the same pinned fetch,
      // and cancelled with the connection. A stream cut by an error is not resumed (onerror
      // below closes the connection: a dropped call, ADR 0021).
      let fetch = http.fetch;
      if (config.authScheme === 'none' && deps.delegated !== undefined) {
        const grant = new DelegatedGrant({
          owner: deps.delegated.owner,
          port: deps.delegated.port,
          egress: deps.egress,
          redactor: scrubber,
          preRegistered: preRegisteredClient(config, credential),
          signal: () => undefined,
        });
        await raceSignal(grant.load(), signal);
        const oauthFetch = createOAuthFetch({
          egress: deps.egress,
          maxResponseBytes: Math.min(deps.maxLineBytes, OAUTH_MAX_RESPONSE_BYTES),
          timeoutMs: Math.min(effectiveTimeouts(config).requestMs, connectTimeoutMs),
        });
        fetch = new DelegatedFetch(grant, decision.url, oauthFetch, scrubber).wrap(http.fetch);
      }
      transport = new StreamableHTTPClientTransport(decision.url, {
        fetch,
        reconnectionOptions: {
          maxRetries: RESUME_ATTEMPTS,
          initialReconnectionDelay: 1000,
          maxReconnectionDelay: RESUME_MAX_DELAY_MS,
          reconnectionDelayGrowFactor: 2,
        },
        reconnectionScheduler: (reconnect, delay) => {
          const timer = setTimeout(reconnect, Math.min(Math.max(0, delay), RESUME_MAX_DELAY_MS));
          timer.unref();
          return () => clearTimeout(timer);
        },
      });
    } else {
      const command = stdioCommand(config);
      if (command === null)
        throw new McpAdapterError('mcp.config.endpoint_invalid', 'The stdio command line is empty or has an unclosed quote.');
      const envCredential = credential.environmentCredential();
      transport = new StdioServerTransport({
        command: command.command,
        args: command.args,
        ...(envCredential === undefined ? {} : { credential: envCredential }),
        ...(config.env === undefined ? {} : { environment: config.env }),
        stderrMaxBytes: deps.stderrMaxBytes,
        maxLineBytes: deps.maxLineBytes,
      });
    }

    const telemetry: RequestTelemetry = { serverId: config.serverId, metrics: deps.metrics };
    // ADR 0044, "The client adapter moved": over HTTP the client probes with `server/discover`
    // and speaks 2026-07-28 to a server that offers it, else falls back to the plain 2025
    // `initialize` (2025-11-25, or what the server answers). Over stdio it runs the 2025
    // handshake only: the probe would run in place on our own transport (the SDK's sibling
    // spawn is only for its StdioClientTransport, which we cannot use: § the environment is
    // built), and a silent legacy child would hold the handshake until the probe's timeout.
    // Form elicitation only, and only with someone to answer it (docs/adr/0060): URL mode is
    // not advertised, so the SDK refuses it before our handler. At 2026-07-28 the same handler
    // answers the requests an `input_required` result embeds; the SDK's driver re-sends the call
    // with the answers and the server's requestState echoed byte for byte, on a fresh id, for at
    // most INPUT_REQUIRED_MAX_ROUNDS rounds.
    const eliciting = deps.elicitation === undefined ? null : new ElicitingCalls(deps.elicitation, (value) => scrubber.redact(value));
    const client = new Client(CLIENT_INFO, {
      capabilities: eliciting === null ? {} : { elicitation: { form: {} } },
      versionNegotiation: { mode: config.transport === 'http' ? 'auto' : 'legacy' },
      inputRequired: { maxRounds: INPUT_REQUIRED_MAX_ROUNDS },
    });
    if (eliciting !== null)
      client.setRequestHandler('elicitation/create', (request, ctx) => eliciting.answer(request.params, ctx.mcpReq.signal));
    if (options.onToolsListChanged !== undefined) {
      const notify = options.onToolsListChanged;
      client.setNotificationHandler('notifications/tools/list_changed', () => notify());
    }
    try {
      // The span's parent is the caller's context; the connect itself runs detached from it, so
      // what the transport sets up for the connection's life (the child's pipes, the SSE
      // stream) and the notification handlers it runs (a list_changed re-list) do not inherit
      // the span of whichever call happened to open the connection.
      const parent = context.active();
      await context.with(ROOT_CONTEXT, () =>
        traceRequest(
          telemetry,
          'initialize',
          { signal, deadlineAt: started + connectTimeoutMs },
          () => client.connect(transport, { timeout: Math.max(1, connectTimeoutMs - (Date.now() - started)), signal }),
          parent,
        ),
      );
    } catch (error) {
      await client.close().catch(() => undefined);
      await transport.close().catch(() => undefined);
      http?.close();
      throw classifyConnectError(error, config, challenge, signal);
    }
    assumeCompleteResults(transport, () => client.getNegotiatedProtocolVersion());
    const connection = new McpConnection({
      config,
      client,
      transport,
      http,
      credential,
      scrubber,
      connectedAt: deps.now(),
      telemetry,
      oversize,
      eliciting,
    });
    client.onclose = () => connection.#onClosed(options.onUnexpectedClose);
    client.onerror = (error) => {
      // A broken SSE stream or a line over the cap: the connection is no longer trustworthy.
      // (A JSON body over the cap fails only its own request: the session itself is sound.)
      // A cancelled request's stream that the fetch ends on purpose is a clean end; the SDK's
      // resumption reports ("Maximum reconnection attempts (3) exceeded.", "Failed to reconnect
      // SSE stream: …") are not acted on: the request they concerned ends with its own timeout.
      if (error instanceof LineTooLongError || /^SSE stream disconnected/.test(error.message)) void connection.close();
    };
    return connection;
  }

  /** The MCP revision the handshake negotiated (ADR 0044: 2026-07-28 or a 2025 revision). */
  get protocolVersion(): string | undefined {
    return this.#client.getNegotiatedProtocolVersion();
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * SEP-2243 applies: 2026-07-28 over Streamable HTTP, where tools/call mirrors x-mcp-header
   * arguments into Mcp-Param-* headers and a tool with invalid declarations is excluded (the
   * SDK's own gate for both is the modern era on a non-stdio transport; docs/adr/0064).
   */
  get mirrorsParamHeaders(): boolean {
    return this.config.transport === 'http' && this.#client.getProtocolEra() === 'modern';
  }

  /** tools/list, every page, bounded. */
  // Listings are redacted like results (ADR 0018): a declaration that echoes the credential would
  // otherwise be stored in the catalog or a skill row and shown to a model.
  async listTools(signal?: AbortSignal): Promise<unknown[]> {
    return this.scrubber.redact(await this.#paginate('tools/list', LooseListTools, (page) => page.tools, signal));
  }

  /** `deadlineAt` (epoch ms): the call's deadline, when a tool's execute lists (telemetry only). */
  async listResources(signal?: AbortSignal, deadlineAt?: number): Promise<unknown[]> {
    return this.scrubber.redact(await this.#paginate('resources/list', LooseListResources, (page) => page.resources, signal, deadlineAt));
  }

  async listPrompts(signal?: AbortSignal): Promise<unknown[]> {
    return this.scrubber.redact(await this.#paginate('prompts/list', LooseListPrompts, (page) => page.prompts, signal));
  }

  async readResource(uri: string, timeoutMs: number, signal?: AbortSignal, deadlineAt?: number, ceilingBytes?: number) {
    return this.#request('resources/read', { uri }, LooseReadResource, timeoutMs, signal, deadlineAt, ceilingBytes);
  }

  async getPrompt(name: string, signal?: AbortSignal) {
    return this.#request('prompts/get', { name }, LooseGetPrompt, this.timeouts.requestMs, signal);
  }

  /**
   * tools/call. The per-call timeout is the caller's: the context's effective timeout, which
   * already holds the request timeout (docs/adr/0025). `deadlineAt` (epoch ms) is the call's
   * own deadline, which the executor enforces by aborting `signal`: an abort at or after it is
   * counted as `timeout`. `ceilingBytes`: the call's hard output ceiling; an HTTP response body
   * is read no further than that (§ Output: "a bounded reader"). `idempotencyKey`: the call's
   * application key, passed verbatim (§ Idempotency; docs/adr/0066). `inputSchema`: the
   * registered schema, whose x-mcp-header marks the SEP-2243 headers (docs/adr/0064). `call`:
   * the call a server's form elicitation during this request is put to (docs/adr/0060).
   */
  async callTool(
    name: string,
    args: Record<string, unknown>,
    timeoutMs: number,
    signal?: AbortSignal,
    deadlineAt?: number,
    ceilingBytes?: number,
    idempotencyKey?: string,
    inputSchema?: Record<string, unknown>,
    call?: McpElicitationCall,
  ): Promise<LooseCallToolResult> {
    const params = callParams(name, args, idempotencyKey);
    const send = async (): Promise<LooseCallToolResult> => {
      if (!this.mirrorsParamHeaders || inputSchema === undefined)
        return this.#request('tools/call', params, LooseCallTool, timeoutMs, signal, deadlineAt, ceilingBytes);
      // SEP-2243 (docs/adr/0064): through the SDK's callTool, which mirrors the arguments the
      // schema marks with x-mcp-header into Mcp-Param-* headers, encoded as the SEP says. The
      // definition is the registered one with no outputSchema, so the SDK compiles nothing, and a
      // changed declaration is the pin's to catch (its refetch-and-retry never runs with a
      // definition given). At this revision the SDK's codec reads every tools/call result with its
      // wire schema whichever path sends it; LooseCallTool then shapes it as on every other path.
      // The params sent carry the idempotency key (docs/adr/0066) and the trace context (0068).
      const toolDefinition = { name, inputSchema: { ...inputSchema, type: 'object' } } as const;
      const result = await this.#request(
        'tools/call',
        params,
        LooseCallTool,
        timeoutMs,
        signal,
        deadlineAt,
        ceilingBytes,
        (options, sent) => this.#client.callTool(sent as Parameters<Client['callTool']>[0], { ...options, toolDefinition }),
      );
      return LooseCallTool.parse(result);
    };
    return this.#eliciting === null ? send() : this.#eliciting.during(call, signal, send);
  }

  /** Ladder step 2. */
  reauthenticate(): Promise<ReauthenticationOutcome> {
    return this.credential.reauthenticate();
  }

  /**
   * Orderly close: an HTTP session is terminated (best effort; not when the server just refused
   * our credential — presenting it again is one more failed authentication), a stdio child's
   * group is killed.
   */
  close(options: { readonly terminate?: boolean } = {}): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      if (isStreamableHttpTransport(this.#transport) && !this.#wasDropped && options.terminate !== false) {
        await Promise.race([this.#transport.terminateSession().catch(() => undefined), new Promise((r) => setTimeout(r, 1_000).unref())]);
      }
      await this.#client.close().catch(() => undefined);
      await this.#transport.close().catch(() => undefined);
      this.#http?.close();
    })();
    return this.#closing;
  }

  #wasDropped = false;

  #onClosed(notify: ((reasonCode: string) => void) | undefined): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#wasDropped = true;
    const failure = this.#failure();
    void this.close();
    notify?.(failure !== null ? failure.code : 'tool.server_unreachable');
  }

  /** The message over the cap that closed (or broke a stream of) this connection, if one did. */
  #failure(): LineTooLongError | ResponseTooLargeError | null {
    if (this.#transport instanceof StdioServerTransport) {
      const failure = this.#transport.failure;
      return isOversizeError(failure) ? failure : null;
    }
    return this.#oversize.error;
  }

  async #paginate<S extends typeof LooseListTools | typeof LooseListResources | typeof LooseListPrompts>(
    method: 'tools/list' | 'resources/list' | 'prompts/list',
    schema: S,
    entries: (page: ReturnType<S['parse']>) => unknown[],
    signal?: AbortSignal,
    deadlineAt?: number,
  ): Promise<unknown[]> {
    const all: unknown[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = (await this.#request(
        method,
        cursor === undefined ? {} : { cursor },
        schema,
        this.timeouts.requestMs,
        signal,
        deadlineAt,
      )) as ReturnType<S['parse']>;
      all.push(...entries(result));
      if (all.length > MAX_LIST_ENTRIES)
        throw new McpAdapterError('mcp.list_too_long', `The server listed more than ${MAX_LIST_ENTRIES} entries.`);
      cursor = (result as { nextCursor?: string }).nextCursor;
      if (cursor === undefined || cursor === '') return all;
    }
    throw new McpAdapterError('mcp.list_too_long', `The server paginated past ${MAX_PAGES} pages.`);
  }

  async #request<S extends Parameters<Client['request']>[1]>(
    method: string,
    params: Record<string, unknown>,
    schema: S,
    timeoutMs: number,
    signal?: AbortSignal,
    deadlineAt?: number,
    ceilingBytes?: number,
    /** The SDK method that sends it, when not the raw request (tools/call: callTool). */
    send?: (options: { timeout: number; signal?: AbortSignal }, params: Record<string, unknown>) => Promise<unknown>,
  ) {
    // Refused before the transport: no round trip, so no span and no sample.
    if (this.#closed) throw new NotDispatchedError('mcp.transport.closed', 'The connection is closed.');
    this.inflight++;
    const ownDeadline = Date.now() + Math.max(1, timeoutMs);
    try {
      return await traceRequest(
        this.#telemetry,
        method,
        { signal, deadlineAt: deadlineAt === undefined ? ownDeadline : Math.min(deadlineAt, ownDeadline) },
        (requestContext) => {
          // docs/adr/0068: the round trip's trace context in params._meta and, over HTTP, headers.
          const carrier = traceCarrier(requestContext);
          const sent = withTraceMeta(params, carrier);
          // The fetch the SDK makes for this request (inside request(), or after callTool's own
          // awaits) runs in this async context and reads the call's ceiling and trace headers
          // from here (pinned-fetch.ts).
          return withTraceHeaders(carrier, () =>
            withCallCeiling(ceilingBytes, () => {
              const options = { timeout: Math.max(1, timeoutMs), ...(signal === undefined ? {} : { signal }) };
              // `send`'s result is shaped by its caller (callTool above).
              if (send !== undefined) return send(options, sent) as never;
              return this.#client.request({ method, params: sent } as Parameters<Client['request']>[0], schema, options);
            }),
          );
        },
      );
    } catch (error) {
      // The connection was closed under this request because a message over the cap arrived (a
      // stdio line, an SSE event): that is what the request ends with, not "connection closed".
      const oversize = this.#failure();
      if (oversize !== null && !isOversizeError(error) && (this.#closed || isConnectionClosed(error))) throw oversize;
      // The Protocol forgets its transport once closed and says only "Not connected" (a plain
      // Error, or SdkError NotConnected): the request never left. A request the close cut short
      // (SdkError ConnectionClosed) or the server refused (ProtocolError) was sent.
      if (
        this.#closed &&
        !isProtocolError(error) &&
        !(isSdkError(error) && !isSdkError(error, 'NotConnected')) &&
        !VeetbotError.isInstance(error)
      )
        throw new NotDispatchedError('mcp.transport.closed', 'The connection is closed.', error);
      throw error;
    } finally {
      this.inflight--;
      this.lastUsedAt = Date.now();
    }
  }
}

function raceSignal<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted)
    return Promise.reject(new McpAdapterError('mcp.connect_timeout', 'The handshake did not complete in time.', { retryable: true }));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () =>
      reject(new McpAdapterError('mcp.connect_timeout', 'The handshake did not complete in time.', { retryable: true }));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * The operator's pre-registered client (docs/adr/0077). A public client only, for now: a
 * confidential client's secret would be revealed to build the token request's client
 * authentication, and § Authentication allows a SecretValue to be revealed in two places only
 * (building a header, building a child environment — apps/integration-tests/test/reveal-sites.test.ts).
 * Until that request's authentication is built at the header site, a secret-bearing client is
 * refused at connect, and the conformance suite's pre-registration scenario stays listed.
 */
/**
 * The operator's pre-registered client (docs/adr/0077). One with a secret authenticates its
 * token requests through the connection's credential, which resolved the secret at connect and
 * alone reveals it (docs/adr/0083).
 */
function preRegisteredClient(config: McpServerConfig, credential: CredentialState): PreRegisteredClient | null {
  const client = config.oauthClient;
  if (client === undefined) return null;
  return {
    clientId: client.clientId,
    ...(client.tokenEndpointAuthMethod === undefined ? {} : { tokenEndpointAuthMethod: client.tokenEndpointAuthMethod }),
    ...(credential.hasClientSecret ? { authenticate: (methods: unknown) => credential.tokenRequestAuthentication(methods) } : {}),
  };
}

/** Our own typed error, where the SDK wrapped it (a fetch failure inside connect). */
function ownErrorIn(error: unknown): VeetbotError | null {
  let at: unknown = error;
  for (let depth = 0; depth < 4 && typeof at === 'object' && at !== null; depth++) {
    if (VeetbotError.isInstance(at)) return at;
    at = (at as { cause?: unknown }).cause;
  }
  return null;
}

function classifyConnectError(
  error: unknown,
  config: McpServerConfig,
  challenge: { resourceMetadata: boolean } | null,
  signal: AbortSignal,
): Error {
  if (VeetbotError.isInstance(error)) return error;
  const own = ownErrorIn(error);
  if (own instanceof McpAuthError || own instanceof McpAuthorizationError) return own;
  const status = httpStatusOf(error);
  if (status === 401 || status === 403) {
    // § Authentication: a server that asks for the authorization-code flow (RFC 9728 resource
    // metadata in its challenge) while we hold no credential of our own needs a user's consent:
    // tool.auth_unsupported. Any other rejection at connect is tool.auth_failed — terminal.
    if (status === 401 && challenge?.resourceMetadata === true && config.authScheme === 'none') {
      return new McpAuthError('tool.auth_unsupported', 'The server requires a user-delegated OAuth flow.', error);
    }
    return new McpAuthError('tool.auth_failed', 'The server rejected the credential at connect.', error);
  }
  if (isProtocolError(error) && /\b(sampling|roots)\b/i.test(error.message)) {
    return new CapabilityRequiredError(error);
  }
  if (signal.aborted || isRequestTimeout(error))
    return new McpAdapterError('mcp.connect_timeout', 'The handshake did not complete in time.', { retryable: true, cause: error });
  return new McpAdapterError('mcp.connect_failed', 'The handshake failed.', { retryable: true, cause: error });
}
