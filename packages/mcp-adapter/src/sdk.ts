import type * as McpClientSdk from '@modelcontextprotocol/client';
import type { ProtocolError, SdkHttpError, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

/** The MCP client SDK's module (2.x). */
export type McpSdk = typeof McpClientSdk;

let loaded: McpSdk | null = null;
let loading: Promise<McpSdk> | null = null;

/**
 * The SDK, imported on the first connection (docs/adr/0048): a process with no MCP server
 * configured, or one that has not connected yet, does not hold the SDK's modules and schemas
 * (about 13 MB of a worker's RSS). Every later call gets the same module.
 */
export function loadMcpSdk(): Promise<McpSdk> {
  if (loaded !== null) return Promise.resolve(loaded);
  loading ??= import('@modelcontextprotocol/client').then((sdk) => {
    loaded = sdk;
    return sdk;
  });
  return loading;
}

/*
 * The SDK's error classes, tested without loading it: an error can only be one of them once the
 * SDK is loaded (the module is the same one whoever imported it, so instanceof holds), and
 * before that nothing of the SDK's has run.
 */

/** An SdkError (the SDK's local failure), with `code` if given (an SdkErrorCode name). */
export function isSdkError(error: unknown, code?: keyof McpSdk['SdkErrorCode']): boolean {
  if (loaded === null || !(error instanceof loaded.SdkError)) return false;
  return code === undefined || error.code === loaded.SdkErrorCode[code];
}

/** A JSON-RPC error answer from the server (2.x: the only thing a ProtocolError is). */
export function isProtocolError(error: unknown): error is ProtocolError {
  return loaded !== null && error instanceof loaded.ProtocolError;
}

/** An HTTP status the server refused a request with. */
export function isSdkHttpError(error: unknown): error is SdkHttpError {
  return loaded !== null && error instanceof loaded.SdkHttpError;
}

/** The SDK's Streamable HTTP client transport (a session to terminate on close). */
export function isStreamableHttpTransport(transport: unknown): transport is StreamableHTTPClientTransport {
  return loaded !== null && transport instanceof loaded.StreamableHTTPClientTransport;
}
