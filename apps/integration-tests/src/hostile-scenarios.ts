/**
 * The misbehaviours of servers/hostile-http-server.ts, one per URL path (`/s/{scenario}/mcp`).
 * What each must end with is ADR 0021's table, asserted by mcp-hostile-http-*.test.ts.
 */
export const HOSTILE_SCENARIOS = [
  'well_behaved',
  'get_404_body',
  'notification_200_json',
  'data_after_json',
  'data_after_sse',
  'cut_json',
  'cut_sse',
  'too_large_json',
  'too_large_sse',
  'slow_body',
  'invalid_json',
  'sse_no_response',
  'flood_sse',
  'redirect',
  'huge_header',
  'cut_initialize',
  'too_large_list',
] as const;
export type HostileScenario = (typeof HOSTILE_SCENARIOS)[number];

export interface ExpectedOutcome {
  readonly status: 'succeeded' | 'failed' | 'unavailable' | 'uncertain' | 'denied';
  readonly reason_code: string;
}

const ok: ExpectedOutcome = { status: 'succeeded', reason_code: 'tool.ok' };
const unreachable: ExpectedOutcome = { status: 'unavailable', reason_code: 'tool.server_unreachable' };
const unknown: ExpectedOutcome = { status: 'uncertain', reason_code: 'tool.outcome_unknown' };

/**
 * ADR 0021's table: the outcome of one tools/call per scenario, for a read-only server and for
 * a non-idempotent write (Decision 26: after dispatch, anything but a result is UNCERTAIN).
 */
export interface ExpectedScenario {
  /** What preparing the session reports for the server. */
  readonly connect: { readonly status: 'connected' | 'failed'; readonly reason_code: string | null };
  readonly readOnly: ExpectedOutcome;
  readonly write: ExpectedOutcome;
}

const connected = { status: 'connected', reason_code: null } as const;
/**
 * A server that fails at connect is prepared without tools (tool.server_unreachable for that
 * server alone); its tools were never advertised, so a call naming one is refused at step 1.
 */
const unadvertised: ExpectedOutcome = { status: 'denied', reason_code: 'policy.matrix.unknown_tool' };
const neverConnects: ExpectedScenario = {
  connect: { status: 'failed', reason_code: 'tool.server_unreachable' },
  readOnly: unadvertised,
  write: unadvertised,
};

export const EXPECTED_OUTCOMES: Readonly<Record<HostileScenario, ExpectedScenario>> = {
  well_behaved: { connect: connected, readOnly: ok, write: ok },
  // Not errors at all: the standalone GET stream is optional, a notification's body is unread.
  get_404_body: { connect: connected, readOnly: ok, write: ok },
  notification_200_json: { connect: connected, readOnly: ok, write: ok },
  // The response arrived whole; what followed it is discarded.
  data_after_json: { connect: connected, readOnly: ok, write: ok },
  data_after_sse: { connect: connected, readOnly: ok, write: ok },
  // § Failure modes: a server that disconnects mid-call is unavailable (read-only) or UNCERTAIN.
  cut_json: { connect: connected, readOnly: unreachable, write: unknown },
  cut_sse: { connect: connected, readOnly: unreachable, write: unknown },
  too_large_json: {
    connect: connected,
    readOnly: { status: 'failed', reason_code: 'tool.output_too_large.mcp_response' },
    write: { status: 'uncertain', reason_code: 'tool.outcome_unknown.mcp_response_too_large' },
  },
  too_large_sse: {
    connect: connected,
    readOnly: { status: 'failed', reason_code: 'tool.output_too_large.mcp_response' },
    write: { status: 'uncertain', reason_code: 'tool.outcome_unknown.mcp_response_too_large' },
  },
  // The call's own timeout ends a body that never finishes.
  slow_body: { connect: connected, readOnly: { status: 'failed', reason_code: 'tool.timeout' }, write: unknown },
  sse_no_response: { connect: connected, readOnly: { status: 'failed', reason_code: 'tool.timeout' }, write: unknown },
  // § Output: "A tool that streams past it is cancelled with OUTPUT_TOO_LARGE": the response
  // body is read no further than the call's ceiling (maximum_output_bytes × 4), however small
  // each message is (docs/adr/0025); ADR 0021's codes, Decision 26's status.
  flood_sse: {
    connect: connected,
    readOnly: { status: 'failed', reason_code: 'tool.output_too_large.mcp_response' },
    write: { status: 'uncertain', reason_code: 'tool.outcome_unknown.mcp_response_too_large' },
  },
  invalid_json: { connect: connected, readOnly: { status: 'failed', reason_code: 'tool.transport.mcp_response_invalid' }, write: unknown },
  // The redirect is refused, never followed; the request had been received.
  redirect: { connect: connected, readOnly: unreachable, write: unknown },
  huge_header: { connect: connected, readOnly: unreachable, write: unknown },
  // At connect time (a handshake cut mid-body, a tools/list over the cap): that server only.
  cut_initialize: neverConnects,
  too_large_list: neverConnects,
};
