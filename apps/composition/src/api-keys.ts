import { createHash, randomBytes } from 'node:crypto';

/** `vbk_` + 32 base64url characters (192 random bits). */
export const API_KEY_PATTERN = /^vbk_[A-Za-z0-9_-]{16,128}$/;

export function generateApiKey(): string {
  return `vbk_${randomBytes(24).toString('base64url')}`;
}

/** Keys are stored as sha256 (ApiKeyStore.keyHash): the key itself never reaches the database. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** The first characters, to recognise a key in a list without revealing it. */
export function apiKeyPrefix(key: string): string {
  return key.slice(0, 12);
}
