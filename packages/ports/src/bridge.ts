import type { ToolResultItem } from '@veetbot/domain';

/**
 * § The programmatic orchestration bridge (docs/adr/0038): the transport between a sandboxed
 * program and the one pipeline. The adapter (packages/sandbox-adapter) owns the socket, the
 * token, the wire and the ordinal; the runtime supplies the handler, which re-enters step 1 of
 * executeToolCall for every call. The bridge never executes a tool itself.
 */

/** The turn a bridge serves: the token is bound to it and valid for it only. */
export interface BridgeTurn {
  readonly tenantId: string;
  readonly runId: string;
  readonly stepNumber: number;
  /** sha256 (lowercase hex) of the orchestration source the model submitted. */
  readonly scriptHash: string;
}

/** One call the program made, as the bridge counted it. */
export interface BridgeCall {
  /** Zero-based index of the call within the turn, counted by the bridge (the script's is ignored). */
  readonly ordinal: number;
  /** bridgeCallId(scriptHash, ordinal): "bridge:" + sha256(script_hash NUL ordinal)[:32]. */
  readonly callId: string;
  readonly toolName: string;
  /** The program's arguments as parsed JSON; the pipeline validates them against the schema. */
  readonly arguments: unknown;
}

/**
 * § The bridge: "the response is the same outcome object the model reads" — the pipeline's
 * rendered ToolResultItem, one place where outcome shapes are defined. Its call_id is the
 * call's callId.
 */
export type BridgeOutcome = ToolResultItem;

/**
 * The runtime's side: run the call through the pipeline and answer its rendered result. The
 * signal aborts when the turn closes. A throw is answered as tool.internal, never a crash.
 */
export type BridgeCallHandler = (call: BridgeCall, signal: AbortSignal) => Promise<BridgeOutcome>;
