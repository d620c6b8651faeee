import { randomBytes } from 'node:crypto';
import type { McpDelegatedGrantRow, McpDelegatedGrantStore, McpDelegatedTokens, PutMcpDelegatedGrant } from '@veetbot/ports';
import { describe, expect, it } from 'vitest';
import { CredentialError, reencryptMcpDelegatedGrants, SealedMcpTokenStore, SecretKeyring, secretKey } from '../src/index';

const ACCESS = `at-${randomBytes(12).toString('hex')}`;
const REFRESH = `rt-${randomBytes(12).toString('hex')}`;
const TOKENS: McpDelegatedTokens = {
  accessToken: ACCESS,
  refreshToken: REFRESH,
  tokenType: 'Bearer',
  expiresAt: new Date('2026-12-03T18:00:00.000Z'),
  scope: 'files.read',
  issuer: 'https://auth.example.com',
};
const alice = { tenantId: 't1', principalId: 'alice', serverId: 'acme' };

/** A unit-test fake of the row store (the real one runs in store-postgres' contract and the api test). */
class MemoryGrants implements McpDelegatedGrantStore {
  readonly rows = new Map<string, McpDelegatedGrantRow>();
  key = (t: string, p: string, s: string) => JSON.stringify([t, p, s]);
  async put(tenantId: string, g: PutMcpDelegatedGrant) {
    const prior = this.rows.get(this.key(tenantId, g.principalId, g.serverId));
    this.rows.set(this.key(tenantId, g.principalId, g.serverId), {
      tenantId,
      principalId: g.principalId,
      serverId: g.serverId,
      ciphertext: g.ciphertext,
      keyId: g.keyId,
      issuer: g.issuer,
      expiresAt: g.expiresAt,
      createdAt: prior?.createdAt ?? g.at,
      updatedAt: g.at,
    });
  }
  async get(t: string, p: string, s: string) {
    return this.rows.get(this.key(t, p, s)) ?? null;
  }
  async list() {
    return [];
  }
  async delete(t: string, p: string, s: string) {
    return this.rows.delete(this.key(t, p, s));
  }
  async listNotSealedWith(keyId: string) {
    return [...this.rows.values()].filter((r) => r.keyId !== keyId);
  }
  async reseal(t: string, p: string, s: string, from: string, sealed: { ciphertext: Uint8Array; keyId: string }) {
    const row = this.rows.get(this.key(t, p, s));
    if (row === undefined || row.keyId !== from) return false;
    this.rows.set(this.key(t, p, s), { ...row, ...sealed });
    return true;
  }
}

const codeOf = async (work: () => Promise<unknown>) => {
  try {
    await work();
  } catch (error) {
    expect(error).toBeInstanceOf(CredentialError);
    expect((error as Error).message).not.toContain(ACCESS);
    return (error as CredentialError).code;
  }
  throw new Error('expected a failure');
};

describe('SealedMcpTokenStore (docs/adr/0080)', () => {
  it('round-trips per (tenant, principal, server); the row holds neither token in any common encoding', async () => {
    const grants = new MemoryGrants();
    const store = new SealedMcpTokenStore(grants, new SecretKeyring(secretKey(randomBytes(32))));
    await store.save(alice, TOKENS);
    expect(await store.load(alice)).toEqual(TOKENS);
    expect(await store.load({ ...alice, principalId: 'bob' })).toBeNull();
    expect(await store.load({ ...alice, tenantId: 't2' })).toBeNull();
    expect(await store.load({ ...alice, serverId: 'other' })).toBeNull();
    const row = [...grants.rows.values()][0]!;
    expect(row).toMatchObject({ issuer: TOKENS.issuer, expiresAt: TOKENS.expiresAt });
    const raw = JSON.stringify({ ...row, ciphertext: Buffer.from(row.ciphertext).toString('latin1') });
    const hex = Buffer.from(row.ciphertext).toString('hex');
    for (const token of [ACCESS, REFRESH])
      for (const form of [token, Buffer.from(token).toString('base64'), Buffer.from(token).toString('hex')]) {
        expect(raw).not.toContain(form);
        expect(hex).not.toContain(form);
      }
    await store.revoke(alice);
    expect(await store.load(alice)).toBeNull();
  });

  it('a row moved to another principal, server or tenant does not open; an altered issuer column is refused', async () => {
    const grants = new MemoryGrants();
    const store = new SealedMcpTokenStore(grants, new SecretKeyring(secretKey(randomBytes(32))));
    await store.save(alice, TOKENS);
    const row = (await grants.get('t1', 'alice', 'acme'))!;
    grants.rows.set(grants.key('t1', 'mallory', 'acme'), { ...row, principalId: 'mallory' });
    expect(await codeOf(() => store.load({ ...alice, principalId: 'mallory' }))).toBe('credential.secret_unreadable');
    grants.rows.set(grants.key('t1', 'alice', 'evil'), { ...row, serverId: 'evil' });
    expect(await codeOf(() => store.load({ ...alice, serverId: 'evil' }))).toBe('credential.secret_unreadable');
    grants.rows.set(grants.key('t2', 'alice', 'acme'), { ...row, tenantId: 't2' });
    expect(await codeOf(() => store.load({ ...alice, tenantId: 't2' }))).toBe('credential.secret_unreadable');
    grants.rows.set(grants.key('t1', 'alice', 'acme'), { ...row, issuer: 'https://evil.example.com' });
    expect(await codeOf(() => store.load(alice))).toBe('credential.secret_unreadable');
  });

  it("a tenant secret's ciphertext planted in a grant row does not authenticate (the sealing names differ)", async () => {
    const ring = new SecretKeyring(secretKey(randomBytes(32)));
    const grants = new MemoryGrants();
    const store = new SealedMcpTokenStore(grants, ring);
    const planted = ring.seal({ tenantId: 't1', name: 'acme' }, JSON.stringify({ v: 1, access_token: 'x' }));
    await grants.put('t1', { principalId: 'alice', serverId: 'acme', ...planted, issuer: TOKENS.issuer, expiresAt: null, at: new Date() });
    expect(await codeOf(() => store.load(alice))).toBe('credential.secret_unreadable');
  });

  it('without a bound principal nothing is kept (the grant stays with its connection)', async () => {
    const grants = new MemoryGrants();
    const store = new SealedMcpTokenStore(grants, new SecretKeyring(secretKey(randomBytes(32))));
    await store.save({ ...alice, principalId: null }, TOKENS);
    expect(grants.rows.size).toBe(0);
    expect(await store.load({ ...alice, principalId: null })).toBeNull();
  });

  it('a key rotation re-seals grants under the current key; an unknown key is reported, never opened', async () => {
    const oldKey = secretKey(randomBytes(32));
    const grants = new MemoryGrants();
    await new SealedMcpTokenStore(grants, new SecretKeyring(oldKey)).save(alice, TOKENS);
    await new SealedMcpTokenStore(grants, new SecretKeyring(secretKey(randomBytes(32)))).save({ ...alice, principalId: 'lost' }, TOKENS);
    const ring = new SecretKeyring(secretKey(randomBytes(32)), [oldKey]);
    const report = await reencryptMcpDelegatedGrants(grants, ring);
    expect(report.reencrypted).toBe(1);
    expect(report.failed).toEqual([{ tenantId: 't1', principalId: 'lost', serverId: 'acme', code: 'credential.key_unknown' }]);
    expect((await grants.get('t1', 'alice', 'acme'))!.keyId).toBe(ring.current.id);
    expect(await new SealedMcpTokenStore(grants, new SecretKeyring(ring.current)).load(alice)).toEqual(TOKENS);
  });
});
