import type { ToolSpec } from './tool-spec';

/** A deferred tool's one-line entry is at most this many characters (docs/adr/0035). */
export const DEFERRED_ENTRY_MAXIMUM_CHARACTERS = 200;

/** One entry of the deferred tool index: the name and a one-line description, never the schema. */
export interface DeferredToolEntry {
  readonly name: string;
  readonly description: string;
}

/**
 * § Control tools, tool.call: a deferred tool is "advertised by a one-line entry rather than a
 * definition". The line is the first line of the spec's description, trimmed, cut at 200
 * characters (code points: a cut never splits a surrogate pair) with "…" marking a cut.
 */
export function deferredToolEntry(spec: Pick<ToolSpec, 'name' | 'description'>): DeferredToolEntry {
  const first = (spec.description.split(/\r\n|\r|\n/, 1)[0] ?? '').trim();
  const points = Array.from(first);
  const description =
    points.length <= DEFERRED_ENTRY_MAXIMUM_CHARACTERS ? first : `${points.slice(0, DEFERRED_ENTRY_MAXIMUM_CHARACTERS - 1).join('')}…`;
  return { name: spec.name, description };
}

/**
 * The deferred tool index of a session: one entry per deferred name, in the order the session
 * stored them, each from the PINNED spec (what the session authorized, not what the registry
 * holds now). A name without a pinned spec is skipped; session open refuses such names.
 */
export function deferredToolIndex(deferredNames: readonly string[], pinnedSpecs: readonly ToolSpec[]): DeferredToolEntry[] {
  const byName = new Map(pinnedSpecs.map((s) => [s.name, s]));
  return deferredNames.flatMap((name) => {
    const spec = byName.get(name);
    return spec === undefined ? [] : [deferredToolEntry(spec)];
  });
}
