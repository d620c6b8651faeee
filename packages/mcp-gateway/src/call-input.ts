import { callerTrustClaim, callerTrustMessage, TrustLevel } from '@veetbot/domain';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { CALL_ID_META, CONTEXT_TRUST_META } from './wire-names';

/**
 * A client's call id: what the steps route accepts as call_id, kept printable and short so it
 * can be logged and compared safely (it is hostile input like everything a client sends).
 */
const CallId = z.string().regex(/^[A-Za-z0-9._:-]{1,128}$/);
const ContextTrust = z.array(TrustLevel).min(1).max(1000);

/** A tool name as a session can pin one (the name grammar is the pipeline's; this only bounds size). */
const ToolName = z.string().min(1).max(256);

export interface CallInput {
  /** null: the gateway mints one (the call then has no client-side repeat handle). */
  readonly callId: string | null;
  readonly toolName: string;
  readonly arguments: Record<string, unknown>;
  readonly contextTrust: readonly TrustLevel[];
}

/**
 * What a generic MCP client's model had read is invisible to the gateway, so a call that does
 * not declare it is labelled EXTERNAL_UNTRUSTED: the policy's trust rules apply at their
 * strictest (docs/adr/0044), exactly as for a REST caller that declares that label.
 */
export const DEFAULT_CONTEXT_TRUST: readonly TrustLevel[] = ['external_untrusted'];

function invalid(message: string): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, message);
}

/** tools/call params → the call the pipeline gets; malformed steering is a JSON-RPC -32602. */
export function callInput(params: { name: unknown; arguments?: unknown; _meta?: unknown }): CallInput {
  const name = ToolName.safeParse(params.name);
  if (!name.success) throw invalid('The tool name is not valid.');
  const args = params.arguments ?? {};
  if (typeof args !== 'object' || args === null || Array.isArray(args)) throw invalid('The arguments must be an object.');
  const meta = (typeof params._meta === 'object' && params._meta !== null ? params._meta : {}) as Record<string, unknown>;
  let callId: string | null = null;
  if (meta[CALL_ID_META] !== undefined) {
    const parsed = CallId.safeParse(meta[CALL_ID_META]);
    if (!parsed.success) throw invalid(`_meta["${CALL_ID_META}"] must be 1-128 characters of A-Z a-z 0-9 . _ : -.`);
    callId = parsed.data;
  }
  let contextTrust = DEFAULT_CONTEXT_TRUST;
  if (meta[CONTEXT_TRUST_META] !== undefined) {
    const parsed = ContextTrust.safeParse(meta[CONTEXT_TRUST_META]);
    if (!parsed.success) throw invalid(`_meta["${CONTEXT_TRUST_META}"] must be a non-empty list of trust labels.`);
    // RULINGS.md 1 (docs/adr/0051): at most `user`, refused loudly as the REST api refuses it.
    const claim = callerTrustClaim({ context_trust: parsed.data });
    if (claim !== null) throw invalid(`_meta["${CONTEXT_TRUST_META}"]: ${callerTrustMessage(claim)} (request.trust_not_allowed).`);
    contextTrust = parsed.data;
  }
  return { callId, toolName: name.data, arguments: args as Record<string, unknown>, contextTrust };
}
