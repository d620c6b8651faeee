import type { Client } from '@modelcontextprotocol/client';
import type { McpSdk } from '../sdk';
import { LooseCallTool } from './result-schemas';

/** The SDK's Client, with tools/call results read by our lenient schema (docs/adr/0064). */
export type LenientClientClass = McpSdk['Client'];

const classes = new WeakMap<McpSdk, LenientClientClass>();

/** A Standard Schema (zod 4 is one): what `request`'s second argument is when it is a result schema. */
function isResultSchema(value: unknown): boolean {
  return typeof value === 'object' && value !== null && '~standard' in value;
}

/**
 * The SDK's Client whose `tools/call` results are read with LooseCallTool instead of the SDK's
 * strict CallToolResult schema. Calls go through `Client.callTool` so that the SDK computes and
 * sends SEP-2243's `Mcp-Param-*` headers itself (2026-07-28 over Streamable HTTP); callTool
 * sends with `request(req, options)`, the form that picks the method's strict schema, which
 * would fail a whole result for one malformed content block — here one bad block is dropped
 * by the mapping instead, as on every other request (result-schemas.ts, ADR 0021). Any other
 * request, and a tools/call that names its own schema, is the SDK's unchanged. A test pins this
 * (a 2026-07-28 result with an unknown content block still maps), so an SDK that stops calling
 * `request` from callTool fails it rather than silently turning strict.
 */
export function lenientClientClass(sdk: McpSdk): LenientClientClass {
  const known = classes.get(sdk);
  if (known !== undefined) return known;
  class LenientToolResultClient extends sdk.Client {}
  const strict = sdk.Client.prototype.request;
  // Assigned rather than declared: the SDK's `request` is an overload pair, which an override
  // would have to restate type by type.
  LenientToolResultClient.prototype.request = function (this: Client, request: { method: string }, schemaOrOptions?: unknown, options?: unknown) {
    const send = strict as (this: Client, request: unknown, schema: unknown, options?: unknown) => Promise<unknown>;
    if (request.method === 'tools/call' && !isResultSchema(schemaOrOptions)) return send.call(this, request, LooseCallTool, schemaOrOptions);
    return send.call(this, request, schemaOrOptions, options);
  } as Client['request'];
  classes.set(sdk, LenientToolResultClient);
  return LenientToolResultClient;
}
