/**
 * Readable text from an HTML page (docs/adr/0078): no parser library, no script, no DOM. One
 * linear scan over the (already bounded) markup: raw-text elements whose content is never prose
 * (script, style, template, …) are skipped whole, comments dropped, block elements become line
 * breaks, headings keep their level as `#`, list items a `- `, and a link keeps its target after
 * its text. A `<` without a closing `>` ends the markup: the scan never backtracks, so hostile
 * markup costs time linear in its length.
 */
export interface ExtractedPage {
  readonly title: string;
  readonly text: string;
}

/** Content never read as prose. */
const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'svg', 'math', 'iframe', 'object', 'embed', 'canvas', 'select']);
const BLOCK = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'br',
  'dd',
  'details',
  'div',
  'dl',
  'dt',
  'figcaption',
  'figure',
  'footer',
  'form',
  'header',
  'hr',
  'li',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'summary',
  'table',
  'tbody',
  'td',
  'th',
  'thead',
  'tr',
  'ul',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
]);
const TITLE_MAX_CHARS = 512;
const HREF_MAX_CHARS = 2_048;

export function extractHtml(markup: string, baseUrl: string): ExtractedPage {
  const lower = markup.toLowerCase();
  const out: string[] = [];
  let title: string | null = null;
  let pendingHref: string | null = null;
  let i = 0;
  while (i < markup.length) {
    const open = markup.indexOf('<', i);
    if (open === -1) {
      out.push(decodeEntities(markup.slice(i)));
      break;
    }
    if (open > i) out.push(decodeEntities(markup.slice(i, open)));
    if (lower.startsWith('<!--', open)) {
      const end = lower.indexOf('-->', open + 4);
      if (end === -1) break;
      i = end + 3;
      continue;
    }
    const close = markup.indexOf('>', open + 1);
    if (close === -1) break;
    const tag = parseTag(markup.slice(open + 1, close));
    i = close + 1;
    if (tag === null) continue;
    if (!tag.closing && tag.name === 'title' && title === null) {
      const end = lower.indexOf('</title', i);
      const raw = end === -1 ? markup.slice(i) : markup.slice(i, end);
      title = collapse(decodeEntities(raw)).slice(0, TITLE_MAX_CHARS);
      if (end === -1) break;
      i = skipPast(lower, end);
      continue;
    }
    if (!tag.closing && SKIPPED.has(tag.name) && !tag.selfClosing) {
      const end = lower.indexOf(`</${tag.name}`, i);
      if (end === -1) break;
      i = skipPast(lower, end);
      continue;
    }
    if (BLOCK.has(tag.name)) {
      out.push('\n');
      if (!tag.closing && /^h[1-6]$/.test(tag.name)) out.push(`${'#'.repeat(Number(tag.name[1]))} `);
      if (!tag.closing && tag.name === 'li') out.push('- ');
    }
    if (tag.name === 'a') {
      if (!tag.closing) pendingHref = linkTarget(tag.attributes, baseUrl);
      else if (pendingHref !== null) {
        out.push(` (${pendingHref})`);
        pendingHref = null;
      }
    }
  }
  const text = out
    .join('')
    .split('\n')
    .map(collapse)
    .filter((line) => line !== '')
    .join('\n');
  return { title: title ?? '', text };
}

interface Tag {
  readonly name: string;
  readonly closing: boolean;
  readonly selfClosing: boolean;
  readonly attributes: string;
}

function parseTag(inner: string): Tag | null {
  const closing = inner.startsWith('/');
  const body = closing ? inner.slice(1) : inner;
  const match = /^[a-zA-Z][a-zA-Z0-9-]*/.exec(body);
  if (match === null) return null; // <!doctype>, <?xml?>, stray `<`: not an element
  return { name: match[0].toLowerCase(), closing, selfClosing: body.endsWith('/'), attributes: body.slice(match[0].length) };
}

/** The index just past the `>` of the end tag at `at` (or the end of the markup). */
function skipPast(lower: string, at: number): number {
  const end = lower.indexOf('>', at);
  return end === -1 ? lower.length : end + 1;
}

/** An http(s) link target, resolved against the page; anything else (javascript:, data:) is dropped. */
function linkTarget(attributes: string, baseUrl: string): string | null {
  const match = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/i.exec(attributes);
  const raw = match === null ? undefined : (match[1] ?? match[2] ?? match[3]);
  if (raw === undefined) return null;
  try {
    const url = new URL(decodeEntities(raw.trim()), baseUrl);
    if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
    url.username = '';
    url.password = '';
    const href = url.toString();
    return href.length > HREF_MAX_CHARS ? null : href;
  } catch {
    return null;
  }
}

const NAMED: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  mdash: '—',
  ndash: '–',
  hellip: '…',
  copy: '©',
};

export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(/&(#[xX][0-9a-fA-F]{1,6}|#[0-9]{1,7}|[a-zA-Z]{2,8});/g, (whole, entity: string) => {
    if (entity.startsWith('#')) {
      const code = entity[1] === 'x' || entity[1] === 'X' ? Number.parseInt(entity.slice(2), 16) : Number.parseInt(entity.slice(1), 10);
      // NUL, surrogates and out-of-range code points are not characters: the replacement character.
      if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\uFFFD';
      return String.fromCodePoint(code);
    }
    return NAMED[entity.toLowerCase()] ?? whole;
  });
}

function collapse(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
