import * as http from 'node:http';
import * as https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import type { EgressDecision } from '@veetbot/ports';

export type AllowedTarget = Extract<EgressDecision, { allowed: true }>;

export type HopResult =
  | { readonly ok: true; readonly response: http.IncomingMessage; readonly request: http.ClientRequest }
  | { readonly ok: false; readonly reason: 'connect_failed' | 'aborted' | 'bad_response' };

/** Headers a page could make unbounded; node's own parser caps the header block (16 KiB). */
const REQUEST_HEADERS = {
  accept: 'text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,text/*;q=0.7',
  'accept-encoding': 'gzip, deflate, br',
  'user-agent': 'veetbot-web-fetch/1.0',
} as const;

/**
 * One GET to exactly the address the egress policy checked (RULINGS.md "Egress": resolve once,
 * check, connect to that address). The name still travels as Host and SNI, and the certificate
 * is checked against it; a DNS answer that changes after the check cannot redirect the dial.
 * No agent is shared and no proxy variable is read: node:http has no proxy support to turn on.
 */
export function pinnedGet(target: AllowedTarget, signal: AbortSignal): Promise<HopResult> {
  const url = target.url;
  const host = bareHost(url);
  const lookup: LookupFunction = (_hostname, options, callback) => {
    if ((options as { all?: boolean }).all === true)
      (callback as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [
        { address: target.address, family: target.family },
      ]);
    else callback(null, target.address, target.family);
  };
  const secure = url.protocol === 'https:';
  return new Promise<HopResult>((resolve) => {
    let request: http.ClientRequest;
    try {
      request = (secure ? https.request : http.request)({
        protocol: url.protocol,
        hostname: host,
        port: url.port === '' ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        method: 'GET',
        headers: REQUEST_HEADERS,
        agent: false,
        // An address literal was itself the checked address; a name resolves only to it.
        ...(isIP(host) === 0 ? { lookup } : {}),
        signal,
      });
    } catch {
      resolve({ ok: false, reason: 'bad_response' });
      return;
    }
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (signal.aborted) return resolve({ ok: false, reason: 'aborted' });
      // A malformed status line or header block (node's parser) is the page's fault, not ours.
      resolve({ ok: false, reason: error.code?.startsWith('HPE_') === true ? 'bad_response' : 'connect_failed' });
    });
    request.on('response', (response) => resolve({ ok: true, response, request }));
    request.end();
  });
}

/** The host as node:http wants it: IPv6 brackets removed. */
function bareHost(url: URL): string {
  const host = url.hostname;
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
