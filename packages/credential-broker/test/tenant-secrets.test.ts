import { mkdtemp, rm, stat, writeFile, chmod, readFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TenantSecretRow } from '@veetbot/ports';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CredentialError,
  loadSecretKeyring,
  operatorCredentialBroker,
  reencryptTenantSecrets,
  SecretKeyring,
  secretKey,
} from '../src/index';
import { TenantScopedCredentialResolvers } from '../src/tenant-scoped-credential-resolvers';

const VALUE = 'sk-live-9f2c-NEVER-SHOWN';
const key = () => secretKey(randomBytes(32));
const a = { tenantId: 'tenant-a', name: 'ACME_TOKEN' };

async function codeOf(work: () => unknown): Promise<string> {
  try {
    await work();
  } catch (error) {
    expect(error).toBeInstanceOf(CredentialError);
    expect(String((error as Error).message)).not.toContain(VALUE);
    return (error as CredentialError).code;
  }
  throw new Error('expected a failure');
}

describe('SecretKeyring (AES-256-GCM, tenant and name as additional data)', () => {
  it('round-trips, with a fresh nonce per seal, and the sealed bytes never hold the value', () => {
    const ring = new SecretKeyring(key());
    const one = ring.seal(a, VALUE);
    const two = ring.seal(a, VALUE);
    expect(ring.open(a, one)).toBe(VALUE);
    expect(Buffer.from(one.ciphertext).equals(Buffer.from(two.ciphertext))).toBe(false);
    const bytes = Buffer.from(one.ciphertext);
    for (const form of [VALUE, Buffer.from(VALUE).toString('base64'), Buffer.from(VALUE).toString('hex')])
      expect(bytes.toString('latin1')).not.toContain(form);
    expect(one.keyId).toBe(ring.current.id);
  });

  it('a ciphertext moved to another tenant or another name does not open', async () => {
    const ring = new SecretKeyring(key());
    const sealed = ring.seal(a, VALUE);
    expect(await codeOf(() => ring.open({ tenantId: 'tenant-b', name: a.name }, sealed))).toBe('credential.secret_unreadable');
    expect(await codeOf(() => ring.open({ tenantId: a.tenantId, name: 'OTHER' }, sealed))).toBe('credential.secret_unreadable');
  });

  it('any changed byte (nonce, tag, body) or a truncation fails authentication', async () => {
    const ring = new SecretKeyring(key());
    const sealed = ring.seal(a, VALUE);
    for (const index of [0, 11, 12, 27, 28, sealed.ciphertext.length - 1]) {
      const tampered = Uint8Array.from(sealed.ciphertext);
      tampered[index] = tampered[index]! ^ 0x01;
      expect(await codeOf(() => ring.open(a, { ...sealed, ciphertext: tampered }))).toBe('credential.secret_unreadable');
    }
    expect(await codeOf(() => ring.open(a, { ...sealed, ciphertext: sealed.ciphertext.subarray(0, 20) }))).toBe(
      'credential.secret_unreadable',
    );
  });

  it('rotation: the new key seals, the previous key still opens old rows; without it, key_unknown', async () => {
    const old = key();
    const sealedOld = new SecretKeyring(old).seal(a, VALUE);
    const rotated = new SecretKeyring(key(), [old]);
    expect(rotated.open(a, sealedOld)).toBe(VALUE);
    const resealed = rotated.seal(a, VALUE);
    expect(resealed.keyId).toBe(rotated.current.id);
    expect(resealed.keyId).not.toBe(old.id);
    expect(await codeOf(() => new SecretKeyring(key()).open(a, sealedOld))).toBe('credential.key_unknown');
    // A row relabelled with the current key's id is not opened by it either.
    expect(await codeOf(() => rotated.open(a, { ...sealedOld, keyId: rotated.current.id }))).toBe('credential.secret_unreadable');
  });
});

describe('loadSecretKeyring', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'secrets-key-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('generates the data folder key once, mode 0600, and reads the same key afterwards', async () => {
    const first = await loadSecretKeyring({ env: {}, dataDir: dir });
    expect(first.source).toBe('generated');
    expect((await stat(join(dir, 'secrets.key'))).mode & 0o777).toBe(0o600);
    const again = await loadSecretKeyring({ env: {}, dataDir: dir });
    expect(again.source).toBe('data folder');
    expect(again.keyring.current.id).toBe(first.keyring.current.id);
    const [x, y] = await Promise.all([loadSecretKeyring({ env: {}, dataDir: join(dir) }), loadSecretKeyring({ env: {}, dataDir: dir })]);
    expect(x.keyring.current.id).toBe(y.keyring.current.id);
  });

  it('VEETBOT_SECRETS_KEY and VEETBOT_SECRETS_KEY_FILE; previous keys; bad values are key_invalid', async () => {
    const raw = randomBytes(32).toString('base64');
    const fromEnv = await loadSecretKeyring({ env: { VEETBOT_SECRETS_KEY: raw }, dataDir: dir });
    expect(fromEnv.source).toBe('VEETBOT_SECRETS_KEY');
    const file = join(dir, 'k');
    await writeFile(file, `${raw}\n`, { mode: 0o600 });
    const fromFile = await loadSecretKeyring({
      env: { VEETBOT_SECRETS_KEY_FILE: file, VEETBOT_SECRETS_PREVIOUS_KEYS: randomBytes(32).toString('base64') },
      dataDir: null,
    });
    expect(fromFile.keyring.current.id).toBe(fromEnv.keyring.current.id);
    expect(fromFile.keyring.keyIds).toHaveLength(2);
    await chmod(file, 0o644);
    expect(await codeOf(() => loadSecretKeyring({ env: { VEETBOT_SECRETS_KEY_FILE: file }, dataDir: null }))).toBe(
      'credential.key_invalid',
    );
    for (const bad of ['short', randomBytes(31).toString('base64'), `${raw}x`]) {
      expect(await codeOf(() => loadSecretKeyring({ env: { VEETBOT_SECRETS_KEY: bad }, dataDir: null }))).toBe('credential.key_invalid');
    }
    expect(
      await codeOf(() => loadSecretKeyring({ env: { VEETBOT_SECRETS_KEY: raw, VEETBOT_SECRETS_KEY_FILE: file }, dataDir: null })),
    ).toBe('credential.key_invalid');
    expect(await codeOf(() => loadSecretKeyring({ env: {}, dataDir: null }))).toBe('credential.key_missing');
    expect(await readFile(file, 'utf8')).toContain(raw);
  });
});

describe('TenantScopedCredentialResolvers', () => {
  const ring = new SecretKeyring(key());
  const rows = new Map<string, TenantSecretRow>();
  const put = (tenantId: string, name: string, value: string) => {
    const sealed = ring.seal({ tenantId, name }, value);
    rows.set(`${tenantId}/${name}`, { tenantId, name, ...sealed, createdAt: new Date(0), rotatedAt: null });
  };
  const broker = new TenantScopedCredentialResolvers({
    env: { OPERATOR_TOKEN: 'operator-value' },
    secrets: { get: async (t, n) => rows.get(`${t}/${n}`) ?? null },
    keyring: ring,
  });
  put('tenant-a', 'ACME_TOKEN', VALUE);

  it('a tenant resolves its own secret:NAME', async () => {
    expect((await broker.forServer('tenant-a', 'tenant').resolve('secret:ACME_TOKEN')).reveal()).toBe(VALUE);
  });

  it("tenant B never resolves tenant A's secret, even with A's ciphertext copied into its own row", async () => {
    expect(await codeOf(() => broker.forServer('tenant-b', 'tenant').resolve('secret:ACME_TOKEN'))).toBe('credential.not_found');
    rows.set('tenant-b/ACME_TOKEN', { ...rows.get('tenant-a/ACME_TOKEN')!, tenantId: 'tenant-b' });
    expect(await codeOf(() => broker.forServer('tenant-b', 'tenant').resolve('secret:ACME_TOKEN'))).toBe('credential.secret_unreadable');
  });

  it('a tenant server may not use env: or file:; an operator server may not use secret:; nothing echoed', async () => {
    for (const ref of ['env:OPERATOR_TOKEN', 'file:/etc/shadow'])
      expect(await codeOf(() => broker.forServer('tenant-a', 'tenant').resolve(ref))).toBe('credential.ref_not_allowed');
    expect(await codeOf(() => broker.forServer('tenant-a', 'tenant').resolve(VALUE))).toBe('credential.invalid_ref');
    expect(await codeOf(() => broker.forServer('tenant-a', 'operator').resolve('secret:ACME_TOKEN'))).toBe('credential.ref_not_allowed');
    expect((await broker.forServer('tenant-a', 'operator').resolve('env:OPERATOR_TOKEN')).reveal()).toBe('operator-value');
    expect(await codeOf(() => operatorCredentialBroker({ env: {} }).forServer('t', 'tenant').resolve('secret:ACME_TOKEN'))).toBe(
      'credential.not_found',
    );
  });
});

describe('reencryptTenantSecrets (rotation without a PUT per secret)', () => {
  it('re-seals every old-key secret with the current key inside its tenant; unreadable ones are reported, never guessed', async () => {
    const old = key();
    const oldRing = new SecretKeyring(old);
    const rows = new Map<string, TenantSecretRow>();
    const put = (ring: SecretKeyring, tenantId: string, name: string, value: string) =>
      rows.set(`${tenantId}/${name}`, { tenantId, name, ...ring.seal({ tenantId, name }, value), createdAt: new Date(0), rotatedAt: null });
    put(oldRing, 'tenant-a', 'ONE', 'value-one');
    put(oldRing, 'tenant-b', 'TWO', 'value-two');
    put(new SecretKeyring(key()), 'tenant-b', 'LOST', 'sealed with a key nobody holds');
    const rotated = new SecretKeyring(key(), [old]);
    put(rotated, 'tenant-a', 'FRESH', 'already current');
    const store = {
      listNotSealedWith: async (keyId: string) =>
        [...rows.values()].filter((r) => r.keyId !== keyId).map(({ tenantId, name, keyId: k }) => ({ tenantId, name, keyId: k })),
      get: async (tenantId: string, name: string) => rows.get(`${tenantId}/${name}`) ?? null,
      reseal: async (tenantId: string, name: string, from: string, sealed: { ciphertext: Uint8Array; keyId: string }) => {
        const row = rows.get(`${tenantId}/${name}`);
        if (row === undefined || row.keyId !== from) return false;
        rows.set(`${tenantId}/${name}`, { ...row, ...sealed });
        return true;
      },
    };
    const report = await reencryptTenantSecrets(store, rotated);
    expect(report.reencrypted).toBe(2);
    expect(report.failed.map((f) => [f.tenantId, f.name, f.code])).toEqual([['tenant-b', 'LOST', 'credential.key_unknown']]);
    // Readable with the new key alone now.
    const newOnly = new SecretKeyring(rotated.current);
    expect(newOnly.open({ tenantId: 'tenant-a', name: 'ONE' }, rows.get('tenant-a/ONE')!)).toBe('value-one');
    expect(newOnly.open({ tenantId: 'tenant-b', name: 'TWO' }, rows.get('tenant-b/TWO')!)).toBe('value-two');
    expect((await reencryptTenantSecrets(store, rotated)).reencrypted).toBe(0);
  });
});
