/*
 * SEP-2243 (protocol revision 2026-07-28, Streamable HTTP): a tool's inputSchema may mark
 * primitive properties with `x-mcp-header: Name`, and a client mirrors those arguments into
 * `Mcp-Param-Name` headers on tools/call. A client MUST exclude a tool whose declarations break
 * the rules. This is the exclusion half only (docs/adr/0064): the SDK builds and encodes the
 * headers itself at call time (Client.callTool), but it exports no scan, and its own exclusion
 * lives only inside Client.listTools, which the adapter does not list through (strict pages at
 * 2025 too, no stable reason, its own cache: docs/adr/0064).
 *
 * The rules are the SDK's (a test holds the two to the same verdicts), and at least as strict,
 * so that a tool registered here is never one the SDK's call-time scan refuses to mirror:
 *   - the annotation sits on a property reached from the root through `properties` only — not
 *     at the root, and not under items, additionalProperties, the combinators, if/then/else,
 *     $defs/definitions or any other subschema keyword (additionalItems and draft-07's
 *     dependencies included, which a dialect translation would turn into keywords the SDK visits);
 *   - its value is a non-empty RFC 9110 token (no space, colon, control or non-ASCII character),
 *     at most HEADER_NAME_MAX_LENGTH long (our cap);
 *   - the property's `type` is one string of string, integer or boolean (not number);
 *   - names are unique case-insensitively.
 */

/** The schema-extension key (SEP-2243). */
export const X_MCP_HEADER_KEY = 'x-mcp-header';

/** The stable reason of mcp.tool.rejected for a tool excluded under these rules. */
export const X_MCP_HEADER_INVALID = 'mcp.tool.x_mcp_header_invalid';

/**
 * Our cap on a declared name: `Mcp-Param-` plus this is still a short header. RFC 9110 sets
 * none; a server declaring a longer name is making headers for something else.
 */
export const HEADER_NAME_MAX_LENGTH = 128;

/** RFC 9110 §5.6.2 token: 1*tchar. */
const RFC9110_TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const PERMITTED_TYPES = new Set(['string', 'integer', 'boolean']);

/** Subschema keywords whose subschemas are not reachable through the `properties` chain. */
const UNREACHABLE_SINGLE = [
  'items',
  'additionalItems',
  'contains',
  'additionalProperties',
  'unevaluatedProperties',
  'unevaluatedItems',
  'propertyNames',
  'not',
  'if',
  'then',
  'else',
];
const UNREACHABLE_ARRAYS = ['prefixItems', 'oneOf', 'anyOf', 'allOf'];
const UNREACHABLE_MAPS = ['patternProperties', 'dependentSchemas', 'dependencies', '$defs', 'definitions'];

/**
 * The walk stops here. Admission caps a schema at depth 16 and 32 KB, which no schema past
 * these bounds passes, so a schema the walk cannot finish is left to admission to reject.
 */
const SCAN_MAX_DEPTH = 64;
const SCAN_MAX_NODES = 20_000;

/** One declaration: the argument path it mirrors and the header name it gives. */
export interface HeaderDeclaration {
  readonly path: readonly string[];
  readonly headerName: string;
}

export type HeaderScan =
  | { readonly kind: 'valid'; readonly declarations: readonly HeaderDeclaration[] }
  /** `why` names the broken rule, for tests and the ADR; the event carries X_MCP_HEADER_INVALID only. */
  | { readonly kind: 'invalid'; readonly why: string }
  /** Too deep or too large to walk: admission rejects it on its own caps. */
  | { readonly kind: 'unscannable' };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

class Unscannable extends Error {}

/** Judges one tool's inputSchema as the server sent it. Never throws. */
export function scanHeaderDeclarations(inputSchema: unknown): HeaderScan {
  const declarations: HeaderDeclaration[] = [];
  const seen = new Map<string, string>();
  let nodes = 0;

  const visit = (node: unknown, path: readonly string[], reachable: boolean, depth: number): string | null => {
    if (!isObject(node)) return null; // boolean schemas and anything else carry no annotation
    if (depth > SCAN_MAX_DEPTH || ++nodes > SCAN_MAX_NODES) throw new Unscannable();
    if (Object.hasOwn(node, X_MCP_HEADER_KEY)) {
      if (!reachable || path.length === 0) return 'placement';
      const name = node[X_MCP_HEADER_KEY];
      if (typeof name !== 'string' || name.length === 0) return 'empty';
      if (name.length > HEADER_NAME_MAX_LENGTH) return 'too_long';
      if (!RFC9110_TOKEN.test(name)) return 'charset';
      if (typeof node.type !== 'string' || !PERMITTED_TYPES.has(node.type)) return 'type';
      const lower = name.toLowerCase();
      if (seen.has(lower)) return 'duplicate';
      seen.set(lower, name);
      declarations.push({ path, headerName: name });
    }
    if (isObject(node.properties)) {
      for (const [key, child] of Object.entries(node.properties)) {
        const fault = visit(child, [...path, key], reachable, depth + 1);
        if (fault !== null) return fault;
      }
    }
    const branches: unknown[] = [];
    for (const k of UNREACHABLE_SINGLE) if (Object.hasOwn(node, k)) branches.push(...(Array.isArray(node[k]) ? node[k] : [node[k]]));
    for (const k of UNREACHABLE_ARRAYS) if (Array.isArray(node[k])) branches.push(...node[k]);
    for (const k of UNREACHABLE_MAPS) if (isObject(node[k])) branches.push(...Object.values(node[k]));
    for (const branch of branches) {
      const fault = visit(branch, path, false, depth + 1);
      if (fault !== null) return fault;
    }
    return null;
  };

  try {
    const fault = visit(inputSchema, [], true, 0);
    return fault === null ? { kind: 'valid', declarations } : { kind: 'invalid', why: fault };
  } catch (error) {
    if (error instanceof Unscannable) return { kind: 'unscannable' };
    throw error;
  }
}
