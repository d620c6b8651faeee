import type { Principal } from '@veetbot/domain';
import type { DynamicTool, RegistrationReport } from './tool-registry';

/** RULINGS.md "Egress": one policy for tenant MCP URLs, OAuth token endpoints and web tools. */
export type EgressDecision =
  | {
      readonly allowed: true;
      readonly url: URL;
      /** The address resolved once and checked; the connection goes to exactly this address. */
      readonly address: string;
      readonly family: 4 | 6;
    }
  | {
      readonly allowed: false;
      readonly code:
        | 'egress.scheme_refused'
        | 'egress.host_not_allowed'
        | 'egress.address_refused'
        | 'egress.resolve_failed'
        | 'egress.url_invalid';
      readonly message: string;
    };

export interface EgressPolicy {
  /** Check a URL (and, for a redirect, each hop): scheme, host allowlist, resolved address. */
  check(url: string): Promise<EgressDecision>;
  /** The same rules without resolving: for validating configuration when it is written. */
  checkStatic(url: string): Exclude<EgressDecision, { allowed: true }> | { readonly allowed: true };
}

export interface McpServerPreparation {
  readonly serverId: string;
  readonly transport: 'stdio' | 'http';
  /** connected: a live handshake; pinned: a remembered discovery (ADR-0131); failed: no tools. */
  readonly status: 'connected' | 'pinned' | 'failed';
  /** For failed: the stable code (tool.auth_failed, tool.auth_unsupported, tool.server_unreachable, …). */
  readonly reasonCode: string | null;
  /**
   * For failed, when the code alone does not say it: the egress policy refused the dial, the
   * host name did not resolve, nothing answered (docs/adr/0056). Operator-facing and
   * tenant-readable: no resolved address, no policy setting, no remote text.
   */
  readonly detail?: string;
  readonly catalogHash: string | null;
  readonly toolCount: number;
  /**
   * connected: the MCP revision the live handshake negotiated (2026-07-28 with a server that
   * offers it over HTTP, else 2025-11-25 or what the server answered; docs/adr/0044). Absent
   * when pinned or failed: there was no handshake.
   */
  readonly protocolVersion?: string;
}

export interface McpSessionRequest {
  readonly tenantId: string;
  readonly sessionId: string;
  readonly principal: Principal;
  /** Typed work that names its servers prepares only those (always live). Undefined: every configured server. */
  readonly serverIds?: readonly string[];
}

export interface McpSessionPreparationResult {
  readonly servers: readonly McpServerPreparation[];
  /** What registerDynamic(…, 'mcp') said about the discovered tools. */
  readonly registration: RegistrationReport;
}

/**
 * § MCP, as the runtime sees it: no SDK type crosses this port. At session open the runtime
 * asks for preparation (connect, initialize, tools/list, map, register, record the catalog
 * generation and the mcp.* events); calls then run through the ordinary pipeline with the
 * DynamicTools the adapter registered.
 */
export interface McpClientPort {
  prepareSession(
    request: McpSessionRequest,
    register: (tools: readonly DynamicTool[]) => Promise<RegistrationReport>,
  ): Promise<McpSessionPreparationResult>;
  /**
   * Run teardown: release the session's transports promptly; the pin and the ladder state stay.
   * The runtime calls it when a run ends, is cancelled or suspends and nothing else of the
   * session is at work in the process; the api when the session is closed (docs/adr/0024).
   */
  releaseSession(sessionId: string): Promise<void>;
  /** Orderly shutdown: close every transport through its owner. */
  shutdown(): Promise<void>;
}
