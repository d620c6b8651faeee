import { ApiError } from './api-error';
import { parseEventStream } from './sse';
import type {
  AnsweredQuestion,
  Approval,
  ApprovalList,
  QuestionList,
  RunList,
  WorkingState,
  CreateMcpServerRequest,
  CreateRunRequest,
  CreateSkillRequest,
  DeferredToolIndex,
  Health,
  Invocation,
  InvocationList,
  ListApprovalsQuery,
  ListInvocationsQuery,
  ListUncertainQuery,
  McpServer,
  McpServerList,
  OpenSessionRequest,
  OperatorMcpServerList,
  Readiness,
  ResolveReviewRequest,
  PutSecretRequest,
  Review,
  Run,
  Secret,
  SecretList,
  McpAuthorizationList,
  Session,
  Skill,
  SkillList,
  StepOutcome,
  StreamEvent,
  SubmitStepRequest,
  UpdateMcpServerRequest,
} from './wire';

/** Global fetch, or anything shaped like it (tests pass a Hono app's `request`). */
export type FetchLike = (input: string, init?: RequestInit) => Promise<Response> | Response;

export interface VeetbotClientOptions {
  /** e.g. `http://127.0.0.1:8787` (no trailing slash needed). */
  readonly baseUrl: string;
  /** `vbk_…`; routes that need none (health, metrics, openapi) work without it. */
  readonly apiKey?: string;
  /** Default: the global fetch. */
  readonly fetch?: FetchLike;
}

/** POST /v1/runs/:id/steps answers 200 (settled) or 202 (still running; `location` to GET). */
export interface StepSubmission {
  readonly status: 200 | 202;
  readonly outcome: StepOutcome;
  readonly location: string | null;
}

export interface Artifact {
  readonly bytes: Uint8Array;
  readonly mediaType: string;
  /** The content's trust label (`external_untrusted` for most tool output). */
  readonly trust: string | null;
  readonly sha256: string | null;
}

export interface EventsOptions {
  /** The run's stream; absent: the tenant's run-less stream. */
  readonly runId?: string;
  /** Replay after this sequence (sent as Last-Event-ID). */
  readonly lastEventId?: number;
  /** Ends the iteration (and the connection). */
  readonly signal?: AbortSignal;
}

type Query = Readonly<Record<string, string | number | undefined>>;

/**
 * A typed client of every route of the veetbot API. Errors are ApiError with the API's stable
 * code; `events()` is an async iterator over the SSE stream.
 */
export class VeetbotClient {
  readonly #base: string;
  readonly #apiKey: string | undefined;
  readonly #fetch: FetchLike;

  constructor(options: VeetbotClientOptions) {
    this.#base = options.baseUrl.replace(/\/+$/, '');
    this.#apiKey = options.apiKey;
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  // Sessions ---------------------------------------------------------------------------
  openSession(body: OpenSessionRequest): Promise<Session> {
    return this.#json('POST', '/v1/sessions', { body });
  }
  getSession(sessionId: string): Promise<Session> {
    return this.#json('GET', `/v1/sessions/${enc(sessionId)}`);
  }
  closeSession(sessionId: string): Promise<Session> {
    return this.#json('POST', `/v1/sessions/${enc(sessionId)}/close`);
  }
  /** The deferred tool index: a one-line entry per deferred tool (§ Control tools, tool.call). */
  getDeferredTools(sessionId: string): Promise<DeferredToolIndex> {
    return this.#json('GET', `/v1/sessions/${enc(sessionId)}/deferred-tools`);
  }

  // Runs and steps -------------------------------------------------------------------
  createRun(body: CreateRunRequest): Promise<Run> {
    return this.#json('POST', '/v1/runs', { body });
  }
  getRun(runId: string): Promise<Run> {
    return this.#json('GET', `/v1/runs/${enc(runId)}`);
  }
  cancelRun(runId: string): Promise<Run> {
    return this.#json('POST', `/v1/runs/${enc(runId)}/cancel`);
  }
  /** Complete a running run with its final answer (a delegated child then joins its parent). */
  completeRun(runId: string, result: string): Promise<Run> {
    return this.#json('POST', `/v1/runs/${enc(runId)}/complete`, { body: { result } });
  }
  listChildRuns(runId: string): Promise<RunList> {
    return this.#json('GET', `/v1/runs/${enc(runId)}/children`);
  }
  getWorkingState(runId: string): Promise<WorkingState> {
    return this.#json('GET', `/v1/runs/${enc(runId)}/working-state`);
  }
  /** The run's unanswered conversation.ask_user questions. */
  listQuestions(runId: string): Promise<QuestionList> {
    return this.#json('GET', `/v1/runs/${enc(runId)}/questions`);
  }
  /** Idempotent on the question id; a different second answer is 409 question.already_answered. */
  answerQuestion(questionId: string, answer: string): Promise<AnsweredQuestion> {
    return this.#json('POST', `/v1/questions/${enc(questionId)}/answer`, { body: { answer } });
  }
  async submitStep(runId: string, body: SubmitStepRequest): Promise<StepSubmission> {
    const response = await this.#send('POST', `/v1/runs/${enc(runId)}/steps`, { body });
    const outcome = (await response.json()) as StepOutcome;
    return { status: response.status === 202 ? 202 : 200, outcome, location: response.headers.get('location') };
  }
  getStep(runId: string, stepNumber: number): Promise<StepOutcome> {
    return this.#json('GET', `/v1/runs/${enc(runId)}/steps/${stepNumber}`);
  }
  /** Submit, then poll the step until it settles (or `timeoutMs` passes): the 202 path made simple. */
  async submitStepAndWait(
    runId: string,
    body: SubmitStepRequest,
    options: { timeoutMs?: number; pollMs?: number } = {},
  ): Promise<StepOutcome> {
    const deadline = Date.now() + (options.timeoutMs ?? 120_000);
    let { outcome } = await this.submitStep(runId, body);
    while (outcome.status === 'running' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 250));
      outcome = await this.getStep(runId, body.step_number);
    }
    return outcome;
  }

  // Approvals ------------------------------------------------------------------------
  listApprovals(query: ListApprovalsQuery = {}): Promise<ApprovalList> {
    return this.#json('GET', '/v1/approvals', { query: { status: query.status, limit: query.limit } });
  }
  /** `binding`: what the decider saw (docs/adr/0047); pass the Approval read from listApprovals. */
  approve(approvalId: string, binding?: ApprovalBinding): Promise<Approval> {
    return this.#json('POST', `/v1/approvals/${enc(approvalId)}/approve`, decisionBody(binding));
  }
  deny(approvalId: string, binding?: ApprovalBinding): Promise<Approval> {
    return this.#json('POST', `/v1/approvals/${enc(approvalId)}/deny`, decisionBody(binding));
  }

  // Invocations and review -------------------------------------------------------------
  listInvocations(query: ListInvocationsQuery = {}): Promise<InvocationList> {
    return this.#json('GET', '/v1/invocations', {
      query: { run_id: query.run_id, status: query.status, tool_name: query.tool_name, cursor: query.cursor, limit: query.limit },
    });
  }
  getInvocation(invocationId: string): Promise<Invocation> {
    return this.#json('GET', `/v1/invocations/${enc(invocationId)}`);
  }
  listUncertain(query: ListUncertainQuery = {}): Promise<InvocationList> {
    return this.#json('GET', '/v1/review/uncertain', { query: { cursor: query.cursor, limit: query.limit } });
  }
  resolveUncertain(invocationId: string, body: ResolveReviewRequest): Promise<Review> {
    return this.#json('POST', `/v1/review/uncertain/${enc(invocationId)}/resolve`, { body });
  }

  // Artifacts --------------------------------------------------------------------------
  async getArtifact(artifactId: string): Promise<Artifact> {
    const response = await this.#send('GET', `/v1/artifacts/${enc(artifactId)}`);
    return {
      bytes: new Uint8Array(await response.arrayBuffer()),
      mediaType: response.headers.get('content-type') ?? 'application/octet-stream',
      trust: response.headers.get('x-veetbot-artifact-trust'),
      sha256: response.headers.get('x-veetbot-artifact-sha256'),
    };
  }

  // MCP servers ------------------------------------------------------------------------
  createMcpServer(body: CreateMcpServerRequest): Promise<McpServer> {
    return this.#json('POST', '/v1/mcp/servers', { body });
  }
  updateMcpServer(serverId: string, body: UpdateMcpServerRequest): Promise<McpServer> {
    return this.#json('PATCH', `/v1/mcp/servers/${enc(serverId)}`, { body });
  }
  getMcpServer(serverId: string): Promise<McpServer> {
    return this.#json('GET', `/v1/mcp/servers/${enc(serverId)}`);
  }
  listMcpServers(): Promise<McpServerList> {
    return this.#json('GET', '/v1/mcp/servers');
  }
  disableMcpServer(serverId: string): Promise<McpServer> {
    return this.#json('POST', `/v1/mcp/servers/${enc(serverId)}/disable`);
  }
  listOperatorMcpServers(): Promise<OperatorMcpServerList> {
    return this.#json('GET', '/v1/mcp/operator-servers');
  }

  // Secrets (ADR 0017) --------------------------------------------------------------------
  /** Create or replace a secret; the value is write-only. `created` is false for a rotation. */
  async putSecret(name: string, value: string): Promise<{ readonly created: boolean; readonly secret: Secret }> {
    const response = await this.#send('PUT', `/v1/secrets/${enc(name)}`, { body: { value } satisfies PutSecretRequest });
    return { created: response.status === 201, secret: (await response.json()) as Secret };
  }
  /** Names and times only; values are never returned. */
  listSecrets(): Promise<SecretList> {
    return this.#json('GET', '/v1/secrets');
  }
  async deleteSecret(name: string): Promise<void> {
    await this.#send('DELETE', `/v1/secrets/${enc(name)}`);
  }

  // Delegated MCP authorizations of the calling principal (docs/adr/0080) ----------------
  /** The servers this key's principal has granted: server, issuer, times; never a token. */
  listMcpAuthorizations(): Promise<McpAuthorizationList> {
    return this.#json('GET', '/v1/mcp/authorizations');
  }
  /** Revoke the principal's grant to one server: its tokens are deleted; the next call asks for consent again. */
  async revokeMcpAuthorization(serverId: string): Promise<void> {
    await this.#send('DELETE', `/v1/mcp/authorizations/${enc(serverId)}`);
  }

  // Skills (docs/adr/0036) ----------------------------------------------------------------
  /** The advertised block: the latest version of every skill, metadata only. */
  listSkills(): Promise<SkillList> {
    return this.#json('GET', '/v1/skills');
  }
  /** The latest version with its content (scope skills.read). */
  getSkill(name: string): Promise<Skill> {
    return this.#json('GET', `/v1/skills/${enc(name)}`);
  }
  /** An operator skill: TRUSTED_CONFIGURATION when loaded (scope skills.write). */
  createSkill(request: CreateSkillRequest): Promise<Skill> {
    return this.#json('POST', '/v1/skills', { body: request });
  }
  /** Every version of the name (scope skills.write). */
  async deleteSkill(name: string): Promise<void> {
    await this.#send('DELETE', `/v1/skills/${enc(name)}`);
  }

  // Events -----------------------------------------------------------------------------
  /** The SSE stream as parsed events; iteration ends when the server closes or `signal` aborts. */
  async *events(options: EventsOptions = {}): AsyncGenerator<StreamEvent> {
    const headers: Record<string, string> = { Accept: 'text/event-stream' };
    if (options.lastEventId !== undefined) headers['Last-Event-ID'] = String(options.lastEventId);
    const response = await this.#send('GET', '/v1/events', {
      query: { run_id: options.runId },
      headers,
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    });
    if (response.body === null) return;
    for await (const message of parseEventStream(response.body, options.signal)) {
      yield JSON.parse(message.data) as StreamEvent;
    }
  }

  // Operations -------------------------------------------------------------------------
  health(): Promise<Health> {
    return this.#json('GET', '/healthz');
  }
  /** /readyz answers 503 with the same body when not ready: returned, not thrown. */
  async ready(): Promise<Readiness> {
    const response = await this.#fetch(`${this.#base}/readyz`, { method: 'GET' });
    return (await response.json()) as Readiness;
  }
  async metrics(): Promise<string> {
    return (await this.#send('GET', '/metrics')).text();
  }
  openApi(): Promise<Record<string, unknown>> {
    return this.#json('GET', '/v1/openapi.json');
  }

  // ------------------------------------------------------------------------------------
  async #json<T>(method: string, path: string, options: { body?: unknown; query?: Query } = {}): Promise<T> {
    const response = await this.#send(method, path, options);
    return (await response.json()) as T;
  }

  async #send(
    method: string,
    path: string,
    options: { body?: unknown; query?: Query; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
    if (this.#apiKey !== undefined) headers.Authorization = `Bearer ${this.#apiKey}`;
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    const init: RequestInit = {
      method,
      headers,
      ...(body === undefined ? {} : { body }),
      ...(options.signal === undefined ? {} : { signal: options.signal }),
    };
    const response = await this.#fetch(`${this.#base}${path}${queryString(options.query)}`, init);
    if (response.ok) return response;
    throw await errorOf(response);
  }
}

function enc(segment: string): string {
  return encodeURIComponent(segment);
}

function queryString(query: Query | undefined): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

async function errorOf(response: Response): Promise<ApiError> {
  const retry = response.headers.get('retry-after');
  const retryAfter = retry !== null && /^\d+$/.test(retry) ? Number(retry) : null;
  const text = await response.text().catch(() => '');
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof parsed.error?.code === 'string' && typeof parsed.error.message === 'string') {
      return new ApiError(response.status, parsed.error.code, parsed.error.message, retryAfter);
    }
  } catch {
    // Not the API's error shape.
  }
  return new ApiError(response.status, 'client.unexpected_response', `Unexpected HTTP ${response.status} response.`, retryAfter);
}

/** What an approval decision is bound to (docs/adr/0047): an Approval as listApprovals gives it. */
export interface ApprovalBinding {
  readonly arguments_hash: string | null;
  readonly policy_version: string | null;
}

function decisionBody(binding: ApprovalBinding | undefined): { body?: unknown } {
  if (binding === undefined || binding.arguments_hash === null || binding.policy_version === null) return {};
  return { body: { arguments_hash: binding.arguments_hash, policy_version: binding.policy_version } };
}
