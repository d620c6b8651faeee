// The console's only way to make DOM (docs/adr/0046): elements from createElement, text from
// createTextNode. Nothing here (or anywhere in the console) parses HTML, so a tenant's or a
// remote peer's text — tool arguments, results, notes, MCP descriptions — is always shown as
// text, never as markup. Attribute names are the console's own; values go through
// setAttribute, which never interprets them as markup either.

/**
 * @param {string} tag
 * @param {Record<string, unknown>} [props] `on*` functions become listeners; `class` the class name
 * @param {...unknown} children strings and numbers become text nodes; null/false are skipped
 * @returns {HTMLElement}
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') node.addEventListener(name.slice(2), /** @type {EventListener} */ (value));
    else if (name === 'class') node.className = String(value);
    else if (name === 'value' && 'value' in node) /** @type {HTMLInputElement} */ (node).value = String(value);
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  append(node, children);
  return node;
}

/** @param {Node} node @param {unknown[]} children */
export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.appendChild(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** @param {Node} node @param {...unknown} children */
export function replace(node, ...children) {
  while (node.firstChild) node.removeChild(node.firstChild);
  append(node, children);
}

/** A definition list from [label, value] pairs (values shown as text). */
export function fields(pairs) {
  return el(
    'dl',
    {},
    ...pairs.filter(([, v]) => v !== undefined).flatMap(([k, v]) => [el('dt', {}, k), el('dd', {}, v === null ? '—' : v)]),
  );
}

/** JSON as indented text inside <pre>: never markup. */
export function jsonBlock(value, testid) {
  return el('pre', testid === undefined ? {} : { 'data-testid': testid }, JSON.stringify(value, null, 2));
}

/** An API error as one line: its stable code and its message. */
export function errorLine(error) {
  const code = error && typeof error === 'object' && 'code' in error ? `${error.code}: ` : '';
  return el('p', { class: 'error', role: 'alert' }, `${code}${error instanceof Error ? error.message : String(error)}`);
}

/** A timestamp as the browser's local time with the ISO form beside it. */
export function when(iso) {
  if (iso === null || iso === undefined) return '—';
  return `${new Date(iso).toLocaleString()} (${iso})`;
}
