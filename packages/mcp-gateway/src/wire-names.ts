/*
 * The names a client uses to steer the gateway (docs/adr/0044). HTTP headers are lower case
 * here because Request.headers.get is case-insensitive and the SDK lower-cases what it sends.
 */

/** Names the run (and so the session) a stateless request, or a stateful initialize, is bound to. */
export const RUN_HEADER = 'veetbot-run-id';
/** The agent id of the session the gateway opens on a stateful initialize that names no run. */
export const AGENT_HEADER = 'veetbot-agent-id';
/** That run's deadline, in seconds from now. */
export const DEADLINE_HEADER = 'veetbot-run-deadline-seconds';

/** On the initialize response: the veetbot session and run this MCP session is bound to. */
export const SESSION_RESPONSE_HEADER = 'veetbot-session-id';
export const RUN_RESPONSE_HEADER = 'veetbot-run-id';

/** tools/call `_meta`: the client's own call id, the idempotency handle for a repeat. */
export const CALL_ID_META = 'veetbot/call_id';
/** tools/call `_meta`: the trust labels of what the client's model had read (§ Where argument trust comes from). */
export const CONTEXT_TRUST_META = 'veetbot/context_trust';
/** Result `_meta`: the call id the gateway used (the one to repeat the call with). */
export const RESULT_CALL_ID_META = 'veetbot/call_id';
/** Result `_meta`: the invocation row, and the rest of the pipeline's ToolResultItem. */
export const RESULT_INVOCATION_META = 'veetbot/invocation_id';
export const RESULT_ITEM_META = 'veetbot/result';
/** Content part `_meta`: the part's resolved trust label. */
export const CONTENT_TRUST_META = 'veetbot/trust';
