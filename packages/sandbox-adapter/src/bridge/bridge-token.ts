import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** § The channel: a one-time bearer token, 32 random bytes, lowercase hex. One per turn. */
export function newBridgeToken(): string {
  return randomBytes(32).toString('hex');
}

/**
 * Constant-time comparison: both sides are hashed first, so neither a mismatch in length nor
 * the position of the first differing byte shows in the time taken.
 */
export function tokensEqual(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}
