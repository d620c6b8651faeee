import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { CredentialError } from './errors';

/** AES-256-GCM (ADR 0017): a 32-byte key, a fresh 12-byte nonce per encryption, a 16-byte tag. */
export const SECRET_KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Bound into every ciphertext's additional data: a format change gets a new tag. */
const AAD_TAG = 'veetbot.tenant_secret.v1';

/**
 * One key of the ring. The id is derived from the key itself (the first 16 hex digits of its
 * sha256), so a row names the key that sealed it without anyone having to keep a numbering,
 * and an api and a worker holding different keys say so (`credential.key_unknown`) instead of
 * failing with an authentication error that looks like tampering.
 */
export interface SecretKey {
  readonly id: string;
  readonly bytes: Uint8Array;
}

export function secretKey(bytes: Uint8Array): SecretKey {
  if (bytes.length !== SECRET_KEY_BYTES) {
    throw new CredentialError(
      'credential.key_invalid',
      null,
      `A secrets key is exactly ${SECRET_KEY_BYTES} bytes (base64 of 32 random bytes).`,
    );
  }
  const copy = Uint8Array.from(bytes);
  return Object.freeze({ id: createHash('sha256').update(copy).digest('hex').slice(0, 16), bytes: copy });
}

/** A sealed value as stored: `nonce ‖ tag ‖ ciphertext` in one bytea, and the sealing key's id. */
export interface SealedSecret {
  readonly ciphertext: Uint8Array;
  readonly keyId: string;
}

/** Who a secret belongs to: both are bound as additional authenticated data. */
export interface SecretOwner {
  readonly tenantId: string;
  readonly name: string;
}

/**
 * The current key encrypts; the current and every previous key decrypt (rotation, ADR 0017:
 * the operator names the old key(s) while the new one takes over; a PUT re-encrypts).
 */
export class SecretKeyring {
  readonly current: SecretKey;
  readonly #byId: ReadonlyMap<string, SecretKey>;

  constructor(current: SecretKey, previous: readonly SecretKey[] = []) {
    this.current = current;
    const byId = new Map<string, SecretKey>();
    for (const key of [current, ...previous]) if (!byId.has(key.id)) byId.set(key.id, key);
    this.#byId = byId;
  }

  /** The ids this ring can open, current first. */
  get keyIds(): readonly string[] {
    return [...this.#byId.keys()];
  }

  seal(owner: SecretOwner, value: string): SealedSecret {
    const key = this.current;
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key.bytes, nonce, { authTagLength: TAG_BYTES });
    cipher.setAAD(additionalData(owner, key.id));
    const body = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    return { ciphertext: new Uint8Array(Buffer.concat([nonce, cipher.getAuthTag(), body])), keyId: key.id };
  }

  /**
   * Opens a sealed value for exactly the owner it was sealed for. A ciphertext copied to
   * another tenant's row or another name, or changed in any byte, fails authentication:
   * `credential.secret_unreadable` — never a guess at the value.
   */
  open(owner: SecretOwner, sealed: SealedSecret): string {
    const key = this.#byId.get(sealed.keyId);
    if (key === undefined) {
      throw new CredentialError(
        'credential.key_unknown',
        null,
        `The secret was sealed with key ${sealed.keyId}, which this process does not hold (set VEETBOT_SECRETS_PREVIOUS_KEYS during a rotation).`,
      );
    }
    const bytes = Buffer.from(sealed.ciphertext);
    if (bytes.length < NONCE_BYTES + TAG_BYTES) throw unreadable();
    try {
      const decipher = createDecipheriv('aes-256-gcm', key.bytes, bytes.subarray(0, NONCE_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(additionalData(owner, key.id));
      decipher.setAuthTag(bytes.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
      const plain = Buffer.concat([decipher.update(bytes.subarray(NONCE_BYTES + TAG_BYTES)), decipher.final()]);
      return new TextDecoder('utf-8', { fatal: true }).decode(plain);
    } catch {
      throw unreadable();
    }
  }
}

const unreadable = () =>
  new CredentialError(
    'credential.secret_unreadable',
    null,
    'The stored secret does not authenticate for this tenant and name (moved, altered, or sealed by another key).',
  );

/** NUL-separated: neither a tenant id nor a secret name may contain NUL, so the split is unambiguous. */
function additionalData(owner: SecretOwner, keyId: string): Buffer {
  return Buffer.from([AAD_TAG, owner.tenantId, owner.name, keyId].join('\u0000'), 'utf8');
}
