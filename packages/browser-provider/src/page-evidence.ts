import { canonicalJson, sha256Hex } from '@veetbot/domain';

/**
 * § New evidence (ADR-0130): "The browser tools key the page they return (its URL, title, text,
 * and each element's role, name and state, without the revision or element references)". A pure
 * function of what the page showed: the same page gives the same key whatever refs the snapshot
 * handed out, and any change a reader could see gives another (docs/adr/0079).
 */
export interface PageElement {
  readonly role: string;
  readonly name: string;
  /** The element's state (checked, disabled, expanded, level, pressed, selected, value…), sorted by key. */
  readonly state: Readonly<Record<string, string | number | boolean>>;
}

export interface PageObservation {
  readonly url: string;
  readonly title: string;
  readonly text: string;
  readonly elements: readonly PageElement[];
}

const EVIDENCE_VERSION = 'veetbot.browser.page.v1';
/** Keys of a snapshot node that are not state: identity, structure, references, geometry. */
const NOT_STATE = new Set(['role', 'name', 'children', 'ref', 'box', 'props']);
/** A node list is bounded before it is keyed: a page cannot make the digest unbounded work. */
export const EVIDENCE_MAX_ELEMENTS = 5_000;
export const EVIDENCE_MAX_TEXT_CHARS = 200_000;

export function pageEvidenceKey(observation: PageObservation): string {
  const elements = observation.elements.slice(0, EVIDENCE_MAX_ELEMENTS).map((e) => ({
    role: e.role,
    name: e.name,
    state: Object.fromEntries(Object.entries(e.state).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))),
  }));
  return sha256Hex(
    canonicalJson({
      v: EVIDENCE_VERSION,
      url: observation.url,
      title: observation.title,
      text: observation.text.slice(0, EVIDENCE_MAX_TEXT_CHARS),
      elements,
    }),
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The elements of an accessibility tree as playwright's `ariaSnapshotJSON` gives it (default
 * mode: no refs), in document order, depth first. A bare string is a text node. Element
 * references and boxes are dropped; anything that is not a scalar is not state.
 */
export function flattenAriaTree(tree: unknown, limit: number = EVIDENCE_MAX_ELEMENTS): PageElement[] {
  const out: PageElement[] = [];
  const stack: unknown[] = [tree];
  while (stack.length > 0 && out.length < limit) {
    const node = stack.pop();
    if (Array.isArray(node)) {
      for (let i = node.length - 1; i >= 0; i--) stack.push(node[i]);
      continue;
    }
    if (typeof node === 'string') {
      out.push({ role: 'text', name: node, state: {} });
      continue;
    }
    if (!isRecord(node)) continue;
    const state: Record<string, string | number | boolean> = {};
    for (const [key, value] of Object.entries(node)) {
      if (NOT_STATE.has(key)) continue;
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') state[key] = value;
    }
    out.push({ role: typeof node.role === 'string' ? node.role : '', name: typeof node.name === 'string' ? node.name : '', state });
    if (node.children !== undefined) stack.push(node.children);
  }
  return out;
}
