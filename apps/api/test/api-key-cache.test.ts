import { randomUUID } from 'node:crypto';
import type { ApiKeyChangeFeed, ApiKeyChangeWatcher, ApiKeyRow, ApiKeyStore } from '@veetbot/ports';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiKeyCache } from '../src/api-key-cache';
import { openApiHarness, type ApiHarness } from './harness';

/** The feed as the listener drives it (a unit-test stand-in; the real one is in the contract suite and the PostgreSQL test). */
class FeedStandIn implements ApiKeyChangeFeed {
  readonly watchers = new Set<ApiKeyChangeWatcher>();
  listening = true;
  watch(watcher: ApiKeyChangeWatcher): () => void {
    this.watchers.add(watcher);
    return () => this.watchers.delete(watcher);
  }
  change(keyId: string | null): void {
    for (const w of this.watchers) w.changed(keyId);
  }
  setListening(up: boolean): void {
    this.listening = up;
    for (const w of this.watchers) w.listening(up);
  }
}

/** A store of rows by hash that counts its reads; `gate` holds a read until released. */
class CountingStore implements Pick<ApiKeyStore, 'findByHash'> {
  readonly rows = new Map<string, ApiKeyRow>();
  reads = 0;
  gate: Promise<void> | null = null;
  async findByHash(keyHash: string): Promise<ApiKeyRow | null> {
    this.reads += 1;
    const row = this.rows.get(keyHash) ?? null;
    if (this.gate !== null) await this.gate;
    return row;
  }
  add(hash: string, revoked = false): ApiKeyRow {
    const row: ApiKeyRow = {
      id: randomUUID(),
      tenantId: 'tenant-a',
      keyHash: hash,
      prefix: 'vbk_x',
      principalId: `p-${hash}`,
      scopes: ['demo.write'],
      createdAt: new Date(0),
      revokedAt: revoked ? new Date(1) : null,
    };
    this.rows.set(hash, row);
    return row;
  }
}

describe('ApiKeyCache (docs/adr/0075)', () => {
  it('serves an active key from memory and never holds a revoked or unknown one', async () => {
    const store = new CountingStore();
    const cache = new ApiKeyCache(store, new FeedStandIn());
    store.add('active');
    store.add('revoked', true);
    expect(await cache.check('active')).toEqual({
      status: 'active',
      principal: { tenant_id: 'tenant-a', principal_id: 'p-active', scopes: ['demo.write'] },
    });
    expect(await cache.check('active')).toMatchObject({ status: 'active' });
    expect(store.reads).toBe(1);
    for (let i = 0; i < 3; i++) {
      expect(await cache.check('revoked')).toEqual({ status: 'revoked' });
      expect(await cache.check('unknown')).toEqual({ status: 'unknown' });
    }
    expect(store.reads).toBe(7);
    expect(cache.size).toBe(1);
    // A caller changing what it was given does not change what the cache holds.
    const first = await cache.check('active');
    if (first.status === 'active') first.principal.scopes.push('approvals.decide');
    expect(await cache.check('active')).toMatchObject({ principal: { scopes: ['demo.write'] } });
  });

  it('forgets the key a change names (others stay), and every key on a change that names none', async () => {
    const store = new CountingStore();
    const feed = new FeedStandIn();
    const cache = new ApiKeyCache(store, feed);
    const a = store.add('a');
    store.add('b');
    await cache.check('a');
    await cache.check('b');
    expect(cache.size).toBe(2);
    store.rows.set('a', { ...a, revokedAt: new Date() });
    feed.change(a.id);
    expect(await cache.check('a')).toEqual({ status: 'revoked' });
    expect(cache.size).toBe(1);
    feed.change(null);
    expect(cache.size).toBe(0);
  });

  it('while the listener is down: cleared, every check reads the store and nothing is held; held again once it is back', async () => {
    const store = new CountingStore();
    const feed = new FeedStandIn();
    const cache = new ApiKeyCache(store, feed);
    store.add('a');
    await cache.check('a');
    feed.setListening(false);
    expect(cache.size).toBe(0);
    expect(cache.serving).toBe(false);
    const before = store.reads;
    await cache.check('a');
    await cache.check('a');
    expect(store.reads).toBe(before + 2);
    expect(cache.size).toBe(0);
    feed.setListening(true);
    await cache.check('a');
    await cache.check('a');
    expect(store.reads).toBe(before + 3);
  });

  it('a cache started while nobody listens holds nothing until LISTEN is in effect', async () => {
    const store = new CountingStore();
    const feed = new FeedStandIn();
    feed.listening = false;
    const cache = new ApiKeyCache(store, feed);
    store.add('a');
    await cache.check('a');
    await cache.check('a');
    expect(store.reads).toBe(2);
    expect(cache.size).toBe(0);
  });

  it('a read under way when a change (or the loss of the listener) is heard is answered but not held: it may predate the change', async () => {
    for (const happen of [(feed: FeedStandIn, id: string) => feed.change(id), (feed: FeedStandIn) => feed.setListening(false)]) {
      const store = new CountingStore();
      const feed = new FeedStandIn();
      const cache = new ApiKeyCache(store, feed);
      const row = store.add('a');
      let release!: () => void;
      store.gate = new Promise<void>((resolve) => (release = resolve));
      const pending = cache.check('a');
      happen(feed, row.id);
      feed.setListening(true);
      release();
      expect(await pending).toMatchObject({ status: 'active' });
      expect(cache.size).toBe(0);
    }
  });

  it('is bounded: an entry older than its TTL is read again, and past the size the least recently used goes', async () => {
    let now = 1_000;
    const store = new CountingStore();
    const cache = new ApiKeyCache(store, new FeedStandIn(), { ttlMs: 500, maximumEntries: 2, now: () => now });
    for (const hash of ['a', 'b', 'c']) store.add(hash);
    await cache.check('a');
    now += 499;
    await cache.check('a');
    expect(store.reads).toBe(1);
    now += 2;
    await cache.check('a');
    expect(store.reads).toBe(2);

    await cache.check('b');
    await cache.check('a'); // a is now the most recently used
    await cache.check('c'); // b goes
    expect(cache.size).toBe(2);
    const reads = store.reads;
    await cache.check('a');
    await cache.check('c');
    expect(store.reads).toBe(reads);
    await cache.check('b');
    expect(store.reads).toBe(reads + 1);
  });

  it('close() stops hearing changes and holds nothing more', async () => {
    const store = new CountingStore();
    const feed = new FeedStandIn();
    const cache = new ApiKeyCache(store, feed);
    store.add('a');
    await cache.check('a');
    cache.close();
    expect(feed.watchers.size).toBe(0);
    await cache.check('a');
    expect(store.reads).toBe(2);
    expect(cache.size).toBe(0);
  });
});

describe('the embedded api on PGlite (docs/adr/0075)', () => {
  let h: ApiHarness;
  beforeAll(async () => {
    h = await openApiHarness({ worker: false });
  });
  afterAll(async () => {
    await h?.close();
  });

  it('a key revoked through the stores is refused within a second, though the api held it', async () => {
    const { provisionTenantKey } = await import('@veetbot/composition');
    const fresh = await provisionTenantKey(h.system.stores, {
      tenantId: 'tenant-a',
      tenantName: 'tenant-a',
      principalId: 'short-lived',
      scopes: ['demo.write'],
      now: new Date(),
    });
    expect((await h.call('GET', '/v1/mcp/servers', { key: fresh.key })).status).toBe(200);
    expect(h.system.deps.apiKeyCache?.serving).toBe(true);
    const held = h.system.deps.apiKeyCache?.size ?? 0;
    expect(held).toBeGreaterThan(0);
    // Served from memory: the store is not read for a held key.
    const original = h.system.stores.apiKeys.findByHash.bind(h.system.stores.apiKeys);
    let reads = 0;
    h.system.stores.apiKeys.findByHash = (hash) => {
      reads += 1;
      return original(hash);
    };
    try {
      expect((await h.call('GET', '/v1/mcp/servers', { key: fresh.key })).status).toBe(200);
      expect(reads).toBe(0);
      await h.system.stores.apiKeys.revoke('tenant-a', fresh.keyId, new Date());
      const deadline = performance.now() + 1_000;
      let response = await h.call('GET', '/v1/mcp/servers', { key: fresh.key });
      while (response.status === 200 && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 10));
        response = await h.call('GET', '/v1/mcp/servers', { key: fresh.key });
      }
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('auth.revoked');
      // Still refused on every later request (nothing revoked is held).
      expect((await h.call('GET', '/v1/mcp/servers', { key: fresh.key })).status).toBe(401);
    } finally {
      h.system.stores.apiKeys.findByHash = original;
    }
  });
});
