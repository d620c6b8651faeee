import { createPublicKey, generateKeyPairSync, verify, constants, type KeyObject } from 'node:crypto';
import { VeetbotError } from '@veetbot/domain';
import { describe, expect, it } from 'vitest';
import { CLIENT_ASSERTION_LIFETIME_SECONDS, MAX_PRIVATE_KEY_PEM_BYTES, signClientAssertion } from '../src/auth/client-assertion';
import { basicCredentials, chooseSecretAuthMethod, MAX_AUTH_METHODS_READ } from '../src/auth/client-authentication';
import type { ClientAssertionAlg } from '../src/config/server-config';

/*
 * docs/adr/0083: a token request's client authentication — which method a pre-registered
 * client with a secret uses, the client_secret_basic encoding, and the private_key_jwt
 * assertion (signed with node:crypto, verified here with node:crypto) and its refusals.
 */

function codeOf(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    return VeetbotError.isInstance(error) ? error.code : `not ours: ${String(error)}`;
  }
  return 'no error';
}

function messageOf(work: () => unknown): string {
  try {
    work();
  } catch (error) {
    return error instanceof Error ? `${error.message} ${String((error as { cause?: unknown }).cause ?? '')}` : String(error);
  }
  return '';
}

describe('chooseSecretAuthMethod: how a pre-registered client with a secret authenticates', () => {
  it('client_secret_basic when the server says nothing (RFC 8414 §2 default) or offers it', () => {
    expect(chooseSecretAuthMethod(undefined, undefined)).toBe('client_secret_basic');
    expect(chooseSecretAuthMethod(undefined, [])).toBe('client_secret_basic');
    expect(chooseSecretAuthMethod(undefined, ['client_secret_post', 'client_secret_basic'])).toBe('client_secret_basic');
  });

  it('client_secret_post only when the server offers it and not basic', () => {
    expect(chooseSecretAuthMethod(undefined, ['none', 'client_secret_post'])).toBe('client_secret_post');
  });

  it("keeps the operator's configured method where the server offers it or says nothing", () => {
    expect(chooseSecretAuthMethod('client_secret_post', ['client_secret_basic', 'client_secret_post'])).toBe('client_secret_post');
    expect(chooseSecretAuthMethod('client_secret_post', undefined)).toBe('client_secret_post');
  });

  it('refuses mcp.auth.client_auth_unsupported rather than send the secret in a form the server did not offer', () => {
    expect(codeOf(() => chooseSecretAuthMethod('client_secret_post', ['client_secret_basic']))).toBe('mcp.auth.client_auth_unsupported');
    expect(codeOf(() => chooseSecretAuthMethod(undefined, ['private_key_jwt']))).toBe('mcp.auth.client_auth_unsupported');
    // A secret is never dropped to pass as a public client.
    expect(codeOf(() => chooseSecretAuthMethod(undefined, ['none']))).toBe('mcp.auth.client_auth_unsupported');
  });

  it('reads a hostile list as far as its bound, and only its strings', () => {
    const long = [...Array.from({ length: MAX_AUTH_METHODS_READ }, () => 'private_key_jwt'), 'client_secret_basic'];
    expect(codeOf(() => chooseSecretAuthMethod(undefined, long))).toBe('mcp.auth.client_auth_unsupported');
    expect(chooseSecretAuthMethod(undefined, [42, { x: 1 }, 'client_secret_post'])).toBe('client_secret_post');
    expect(chooseSecretAuthMethod(undefined, 'client_secret_post')).toBe('client_secret_basic');
  });
});

describe('basicCredentials (RFC 6749 §2.3.1)', () => {
  it('form-encodes each part before the Basic encoding', () => {
    const header = basicCredentials('client one', 'se:cr%t');
    expect(Buffer.from(header.replace(/^Basic /, ''), 'base64').toString('utf8')).toBe('client+one:se%3Acr%25t');
  });
});

function parts(jwt: string): { header: Record<string, unknown>; payload: Record<string, unknown>; input: Buffer; signature: Buffer } {
  const [h = '', p = '', s = ''] = jwt.split('.');
  return {
    header: JSON.parse(Buffer.from(h, 'base64url').toString('utf8')) as Record<string, unknown>,
    payload: JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) as Record<string, unknown>,
    input: Buffer.from(`${h}.${p}`),
    signature: Buffer.from(s, 'base64url'),
  };
}

const NOW = new Date('2026-12-03T12:00:00Z');
const CLAIMS = { clientId: 'client-1', audience: 'https://as.example/', now: NOW };

function pem(key: KeyObject): string {
  return key.export({ format: 'pem', type: 'pkcs8' }).toString();
}

describe('signClientAssertion: RFC 7523 private_key_jwt', () => {
  const ec256 = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const ec384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const ed = generateKeyPairSync('ed25519');

  const cases: [ClientAssertionAlg, KeyObject, KeyObject, (input: Buffer, key: KeyObject, sig: Buffer) => boolean][] = [
    ['ES256', ec256.privateKey, ec256.publicKey, (i, k, s) => verify('sha256', i, { key: k, dsaEncoding: 'ieee-p1363' }, s)],
    ['ES384', ec384.privateKey, ec384.publicKey, (i, k, s) => verify('sha384', i, { key: k, dsaEncoding: 'ieee-p1363' }, s)],
    ['RS256', rsa.privateKey, rsa.publicKey, (i, k, s) => verify('sha256', i, k, s)],
    [
      'PS256',
      rsa.privateKey,
      rsa.publicKey,
      (i, k, s) =>
        verify('sha256', i, { key: k, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }, s),
    ],
    ['EdDSA', ed.privateKey, ed.publicKey, (i, k, s) => verify(null, i, k, s)],
  ];

  for (const [alg, privateKey, publicKey, check] of cases) {
    it(`${alg}: the claims RFC 7523 §3 asks for, a signature the public key verifies`, () => {
      const jwt = signClientAssertion(pem(privateKey), { ...CLAIMS, alg, keyId: 'k1' });
      const { header, payload, input, signature } = parts(jwt);
      expect(header).toEqual({ alg, typ: 'JWT', kid: 'k1' });
      const iat = NOW.getTime() / 1000;
      expect(payload).toMatchObject({
        iss: 'client-1',
        sub: 'client-1',
        aud: 'https://as.example/',
        iat,
        exp: iat + CLIENT_ASSERTION_LIFETIME_SECONDS,
      });
      expect(payload.jti).toMatch(/^[A-Za-z0-9_-]{22}$/);
      expect(check(input, publicKey, signature)).toBe(true);
      // A different key does not verify it: the signature is the key's, not a constant.
      expect(check(input, createPublicKey(pem(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey)), signature)).toBe(false);
    });
  }

  it('a fresh jti each time: an assertion is single use', () => {
    const a = parts(signClientAssertion(pem(ec256.privateKey), { ...CLAIMS, alg: 'ES256' }));
    const b = parts(signClientAssertion(pem(ec256.privateKey), { ...CLAIMS, alg: 'ES256' }));
    expect(a.payload.jti).not.toBe(b.payload.jti);
    expect(a.header).toEqual({ alg: 'ES256', typ: 'JWT' });
  });

  it('refuses a key that does not fit the algorithm, with tool.auth_failed and never the key in the message', () => {
    const refusals: [ClientAssertionAlg, string][] = [
      ['ES256', pem(ec384.privateKey)], // wrong curve
      ['ES256', pem(rsa.privateKey)], // not EC
      ['RS256', pem(ec256.privateKey)], // not RSA
      ['EdDSA', pem(rsa.privateKey)],
      ['RS256', pem(generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey)], // too short
      ['ES256', rsa.publicKey.export({ format: 'pem', type: 'spki' }).toString()], // a public key
      ['ES256', 'not a key at all'],
      ['ES256', `-----BEGIN PRIVATE KEY-----\n${'A'.repeat(MAX_PRIVATE_KEY_PEM_BYTES)}\n-----END PRIVATE KEY-----`], // oversized
    ];
    for (const [alg, key] of refusals) {
      const sign = () => signClientAssertion(key, { ...CLAIMS, alg });
      expect(codeOf(sign)).toBe('tool.auth_failed');
      const body = key.split('\n').find((line) => !line.startsWith('-----') && line.length > 20) ?? key;
      expect(messageOf(sign)).not.toContain(body.slice(0, 20));
    }
  });
});
