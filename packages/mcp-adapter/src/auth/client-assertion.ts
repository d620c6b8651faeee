import { constants, createPrivateKey, randomBytes, sign, type KeyObject } from 'node:crypto';
import type { ClientAssertionAlg } from '../config/server-config';
import { McpAuthError } from '../errors';

/** RFC 7523 §2.2's client_assertion_type. */
export const JWT_BEARER_ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';

/** A client assertion is good for this long: one token request, with room for clock skew. */
export const CLIENT_ASSERTION_LIFETIME_SECONDS = 60;
/** The private key's PEM is at most this long (an RSA 8192 key is ~6.5 KiB). */
export const MAX_PRIVATE_KEY_PEM_BYTES = 16 * 1024;
/** RSA keys shorter than this are refused (NIST SP 800-131A). */
export const MIN_RSA_MODULUS_BITS = 2048;

export interface ClientAssertionClaims {
  /** iss and sub (RFC 7523 §3): the client_id. */
  readonly clientId: string;
  /** aud: the authorization server (its issuer or token endpoint, as the operator configured). */
  readonly audience: string;
  readonly alg: ClientAssertionAlg;
  readonly keyId?: string | undefined;
  readonly now: Date;
}

const HASH: Record<ClientAssertionAlg, string | null> = {
  RS256: 'sha256',
  RS384: 'sha384',
  RS512: 'sha512',
  PS256: 'sha256',
  PS384: 'sha384',
  PS512: 'sha512',
  ES256: 'sha256',
  ES384: 'sha384',
  ES512: 'sha512',
  EdDSA: null,
};

const CURVE: Partial<Record<ClientAssertionAlg, string>> = { ES256: 'prime256v1', ES384: 'secp384r1', ES512: 'secp521r1' };

function refuse(message: string): never {
  // Fixed text: never the key, never what the parser said about it.
  throw new McpAuthError('tool.auth_failed', message);
}

/** The key, checked against the algorithm: a private key of the algorithm's type, curve and size. */
function privateKeyFor(pem: string, alg: ClientAssertionAlg): KeyObject {
  if (Buffer.byteLength(pem, 'utf8') > MAX_PRIVATE_KEY_PEM_BYTES)
    refuse(`The private key for private_key_jwt is larger than ${MAX_PRIVATE_KEY_PEM_BYTES} bytes.`);
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch {
    refuse('The credential for private_key_jwt is not a PEM private key.');
  }
  const type = key.asymmetricKeyType;
  const details = key.asymmetricKeyDetails ?? {};
  if (alg.startsWith('RS') || alg.startsWith('PS')) {
    if (type !== 'rsa' && !(type === 'rsa-pss' && alg.startsWith('PS'))) refuse(`The private key is not an RSA key, which ${alg} needs.`);
    if ((details.modulusLength ?? 0) < MIN_RSA_MODULUS_BITS) refuse(`The RSA private key is shorter than ${MIN_RSA_MODULUS_BITS} bits.`);
  } else if (alg === 'EdDSA') {
    if (type !== 'ed25519' && type !== 'ed448') refuse('The private key is not an Ed25519 or Ed448 key, which EdDSA needs.');
  } else if (type !== 'ec' || details.namedCurve !== CURVE[alg]) {
    refuse(`The private key is not an EC key on the curve ${alg} needs.`);
  }
  return key;
}

function base64url(value: string | Buffer): string {
  return Buffer.from(value).toString('base64url');
}

/**
 * RFC 7523 §2.2 / §3 and RFC 7521 §4.2: a JWT client assertion, signed with the operator's
 * private key (node:crypto only). The PEM is the revealed credential: the caller is
 * CredentialState, which reveals it while building this request's client authentication and
 * keeps nothing; this function keeps nothing either. Claims: iss = sub = client_id, aud, iat,
 * exp (CLIENT_ASSERTION_LIFETIME_SECONDS later), and a random jti (single use).
 */
export function signClientAssertion(pem: string, claims: ClientAssertionClaims): string {
  const key = privateKeyFor(pem, claims.alg);
  const iat = Math.floor(claims.now.getTime() / 1000);
  const header = { alg: claims.alg, typ: 'JWT', ...(claims.keyId === undefined ? {} : { kid: claims.keyId }) };
  const payload = {
    iss: claims.clientId,
    sub: claims.clientId,
    aud: claims.audience,
    iat,
    exp: iat + CLIENT_ASSERTION_LIFETIME_SECONDS,
    jti: randomBytes(16).toString('base64url'),
  };
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(payload))}`;
  const hash = HASH[claims.alg];
  const signature = claims.alg.startsWith('PS')
    ? sign(hash, Buffer.from(input), { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST })
    : claims.alg.startsWith('ES')
      ? sign(hash, Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' })
      : sign(hash, Buffer.from(input), key);
  return `${input}.${base64url(signature)}`;
}
