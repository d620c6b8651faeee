import { createHash, timingSafeEqual } from 'node:crypto';

/** The code and message of a /metrics request without the operator's token (docs/adr/0055). */
export const METRICS_UNAUTHORIZED = {
  code: 'metrics.unauthorized',
  message: 'GET /metrics needs the operator token: Authorization: Bearer <VEETBOT_METRICS_TOKEN>.',
} as const;

/**
 * Whether a /metrics request may read (docs/adr/0055): always when no token is configured (both
 * ports listen on 127.0.0.1 only); else only with `Authorization: Bearer <token>`, compared in
 * constant time (digests of equal length, so not even the length leaks).
 */
export function metricsAuthorized(authorization: string | undefined, token: string | null): boolean {
  if (token === null) return true;
  const match = /^Bearer ([\x21-\x7e]+)$/.exec(authorization?.trim() ?? '');
  if (match === null) return false;
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(match[1]!), digest(token));
}
