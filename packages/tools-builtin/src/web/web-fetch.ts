import { sha256Hex, canonicalJson, type ToolResultInput } from '@veetbot/domain';
import type { EgressPolicy, Tool } from '@veetbot/ports';
import { toolFailure } from '../tool-result-helpers';
import { headerValue, readBoundedBody } from './bounded-body';
import { extractHtml } from './html-text';
import { pinnedGet } from './pinned-get';
import { egressFailure } from './web-failures';
import { WEB_FETCH_MAX_TEXT_CHARS, WEB_URL_MAX_CHARS, webFetchSpec } from './web-fetch-spec';

/** The operator's limits for web.fetch (docs/adr/0078); the tenant sets none of them. */
export interface WebFetchLimits {
  /** Redirect hops followed, each re-checked by the egress policy (default 5). */
  readonly maxRedirects?: number;
  /** Decoded body bytes read at most (default 2 MiB): a gzip bomb stops here. */
  readonly maxBodyBytes?: number;
  /** One fetch's wall time cap in milliseconds (default 20 s), within the call's own deadline. */
  readonly timeoutMs?: number;
}

export interface WebFetchOptions extends WebFetchLimits {
  /**
   * The egress policy every hop is checked against (RULINGS.md "Egress"): https and public
   * addresses unless the OPERATOR allowed http or private addresses. Composed by the operator's
   * process, never taken from the tenant.
   */
  readonly egress: EgressPolicy;
}

const DEFAULTS = { maxRedirects: 5, maxBodyBytes: 2 * 1024 * 1024, timeoutMs: 20_000 } as const;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

type Kind = 'html' | 'text' | 'json';

/** text/html and XHTML are extracted; text/* and JSON are read as text; anything else is refused. */
function kindOf(contentType: string): Kind | null {
  const essence = contentType.split(';')[0]!.trim().toLowerCase();
  if (essence === 'text/html' || essence === 'application/xhtml+xml') return 'html';
  if (essence === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(essence)) return 'json';
  if (essence.startsWith('text/') || essence === '') return 'text';
  return null;
}

function charsetOf(contentType: string): string {
  const match = /;\s*charset\s*=\s*"?([a-zA-Z0-9._:-]{1,40})"?/i.exec(contentType);
  const label = match?.[1] ?? 'utf-8';
  try {
    new TextDecoder(label);
    return label;
  } catch {
    return 'utf-8';
  }
}

/**
 * § The circuit breakers, New evidence: the digest of what this call read — the final URL, the
 * title and the whole extracted text — so an identical call that reads a changed page restarts
 * its loop count and one that reads the same page does not. Never model-visible, never stored
 * with the result (step 11 passes it to the breaker only).
 */
export function webEvidenceKey(page: { readonly url: string; readonly title: string; readonly text: string }): string {
  return sha256Hex(canonicalJson({ tag: 'veetbot.web.fetch.v1', url: page.url, title: page.title, text: page.text }));
}

export function createWebFetchTool(options: WebFetchOptions): Tool {
  const limits = {
    maxRedirects: options.maxRedirects ?? DEFAULTS.maxRedirects,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULTS.maxBodyBytes,
    timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
  };
  return {
    spec: webFetchSpec,
    async execute(args, ctx) {
      const maxChars = Math.min(typeof args.max_chars === 'number' ? args.max_chars : WEB_FETCH_MAX_TEXT_CHARS, WEB_FETCH_MAX_TEXT_CHARS);
      // One cap for the whole chain of hops, inside the call's own deadline and cancellation.
      const cap = AbortSignal.timeout(limits.timeoutMs);
      const signal = AbortSignal.any([ctx.cancellation, cap]);
      const timedOut = (): ToolResultInput =>
        ctx.cancellation.aborted
          ? toolFailure('internal', 'web_cancelled', 'The call was cancelled during the fetch.')
          : toolFailure('timeout', 'web_fetch', `The page did not arrive within ${limits.timeoutMs} ms.`, true);

      let url = String(args.url);
      for (let hop = 0; ; hop++) {
        const decision = await options.egress.check(url);
        if (!decision.allowed) return egressFailure(decision, hop);
        if (signal.aborted) return timedOut();
        const sent = await pinnedGet(decision, signal);
        if (!sent.ok) {
          if (sent.reason === 'aborted') return timedOut();
          if (sent.reason === 'bad_response') return toolFailure('upstream_error', 'web_response', 'The server sent a malformed response.');
          return toolFailure('transport', 'web_connect_failed', 'The server could not be reached.', true);
        }
        const { response, request } = sent;
        const status = response.statusCode ?? 0;
        if (REDIRECTS.has(status)) {
          // The redirect's body is unwanted: the connection goes, and the next hop is checked anew.
          const location = headerValue(response.headers.location);
          request.destroy();
          if (hop >= limits.maxRedirects)
            return toolFailure('upstream_error', 'web_redirects', `More than ${limits.maxRedirects} redirects.`);
          let next: URL;
          try {
            next = new URL(location ?? '', decision.url);
          } catch {
            return toolFailure('upstream_error', 'web_response', 'A redirect named no valid location.');
          }
          if (location === undefined || next.href.length > WEB_URL_MAX_CHARS)
            return toolFailure('upstream_error', 'web_response', 'A redirect named no usable location.');
          url = next.href;
          continue;
        }
        if (status < 200 || status > 599) {
          request.destroy();
          return toolFailure('upstream_error', 'web_response', 'The server answered with an unusable status.');
        }
        const contentType = (headerValue(response.headers['content-type']) ?? '').slice(0, 200);
        const kind = kindOf(contentType);
        if (kind === null) {
          request.destroy();
          return toolFailure('invalid_arguments', 'web_content_type', 'The content type is not HTML, text or JSON.');
        }
        const body = await readBoundedBody(response, { maxDecodedBytes: limits.maxBodyBytes, maxWireBytes: limits.maxBodyBytes }, signal);
        request.destroy();
        if (!body.ok) {
          if (body.reason === 'too_large')
            return toolFailure('output_too_large', 'web_body', `The page is over ${limits.maxBodyBytes} bytes.`);
          if (body.reason === 'bad_encoding')
            return toolFailure('upstream_error', 'web_response', 'The content encoding is unsupported or corrupt.');
          return signal.aborted ? timedOut() : toolFailure('transport', 'web_connect_failed', 'The connection ended early.', true);
        }
        const decoded = new TextDecoder(charsetOf(contentType)).decode(body.bytes);
        const finalUrl = decision.url.href;
        const page = kind === 'html' ? extractHtml(decoded, finalUrl) : { title: '', text: decoded };
        const truncated = page.text.length > maxChars;
        let text = truncated ? page.text.slice(0, maxChars) : page.text;
        // Cut on a code point, never inside a surrogate pair.
        if (truncated && /[\uD800-\uDBFF]$/.test(text)) text = text.slice(0, -1);
        return {
          ok: true,
          content: [{ type: 'text', text }],
          structured: {
            url: finalUrl,
            status,
            content_type: contentType,
            title: page.title,
            redirects: hop,
            text_chars: text.length,
            truncated,
          },
          evidence_key: webEvidenceKey({ url: finalUrl, title: page.title, text: page.text }),
        };
      }
    },
  };
}
