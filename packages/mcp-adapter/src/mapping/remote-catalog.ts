import { canonicalJson, compareCodePoints, sha256Hex } from '@veetbot/domain';

/** One tools/list entry, as much of it as the mapping reads. Everything in it is the server's claim. */
export interface RemoteToolDeclaration {
  readonly name: string;
  readonly description: string | null;
  readonly inputSchema: Record<string, unknown>;
  readonly meta: Record<string, unknown> | null;
}

export interface RemoteCatalog {
  /** sha256 over the sorted canonical declarations (§ Schema additions: catalog_hash). */
  readonly catalogHash: string;
  readonly tools: readonly RemoteToolDeclaration[];
  /** Entries that are not tool declarations at all (no name, no object schema, not canonical JSON). */
  readonly malformed: readonly { readonly remoteName: string; readonly reason: string }[];
}

/** Names longer than this are cut where they are reported (events), never where they are matched. */
export const REPORTED_NAME_MAX = 256;

export function reportedName(name: string): string {
  return name.length > REPORTED_NAME_MAX ? `${name.slice(0, REPORTED_NAME_MAX)}…` : name;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The hashed form of a declaration: the four fields the catalog hash covers. */
function hashedForm(tool: RemoteToolDeclaration): Record<string, unknown> {
  return { name: tool.name, description: tool.description, inputSchema: tool.inputSchema, _meta: tool.meta };
}

/**
 * Reads a tools/list result into declarations and computes the catalog hash: sha256 of the
 * canonical JSON of the declarations (name, description, inputSchema, _meta) sorted by name.
 * A server's version strings, titles and annotations are not part of it (§ Discovery: "version
 * is the catalog hash rather than any version string the server reports").
 */
export function readRemoteCatalog(entries: readonly unknown[]): RemoteCatalog {
  const tools: RemoteToolDeclaration[] = [];
  const malformed: { remoteName: string; reason: string }[] = [];
  const canonical = new Map<RemoteToolDeclaration, string>();
  for (const entry of entries) {
    const name = isObject(entry) && typeof entry.name === 'string' ? entry.name : null;
    if (!isObject(entry) || name === null || name === '') {
      malformed.push({ remoteName: name ?? '(unnamed)', reason: 'mcp.tool.declaration_invalid' });
      continue;
    }
    if (!isObject(entry.inputSchema)) {
      malformed.push({ remoteName: name, reason: 'schema.invalid' });
      continue;
    }
    const description = typeof entry.description === 'string' ? entry.description : null;
    const meta = isObject(entry._meta) ? entry._meta : null;
    const tool: RemoteToolDeclaration = { name, description, inputSchema: entry.inputSchema, meta };
    try {
      canonical.set(tool, canonicalJson(hashedForm(tool)));
    } catch {
      // -0, lone surrogates, NFC key collisions: no canonical form, so no stable identity.
      malformed.push({ remoteName: name, reason: 'schema.not_canonical' });
      continue;
    }
    tools.push(tool);
  }
  tools.sort((a, b) => compareCodePoints(a.name, b.name) || compareCodePoints(canonical.get(a)!, canonical.get(b)!));
  const catalogHash = sha256Hex(`[${tools.map((t) => canonical.get(t)!).join(',')}]`);
  return { catalogHash, tools, malformed };
}
