import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BlobStoreError } from '../src/errors';
import { FolderBlobStore } from '../src/index';
import { tenantFolder } from '../src/folder-blob-store';

let root: string;
beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'blob-store-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const bytes = (text: string) => new TextEncoder().encode(text);

async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

describe('FolderBlobStore', () => {
  it('stores bytes at <root>/<sha256(tenant)[:32]>/<aa>/<id>, 0600 in 0700 folders, and reads them back', async () => {
    const store = new FolderBlobStore({ root });
    const id = randomUUID();
    await store.put('tenant/one', id, bytes('hello'));

    const hash = createHash('sha256').update('tenant/one').digest('hex').slice(0, 32);
    expect(tenantFolder('tenant/one')).toBe(hash);
    const file = join(root, hash, id.slice(0, 2), id);
    expect(await readFile(file, 'utf8')).toBe('hello');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(join(root, hash))).mode & 0o777).toBe(0o700);
    expect((await stat(join(root, hash, id.slice(0, 2)))).mode & 0o777).toBe(0o700);

    expect(new TextDecoder().decode((await store.get('tenant/one', id))!)).toBe('hello');
    // Only the blob is left: no temp file survives a successful write.
    expect(await filesUnder(root)).toEqual([file]);
  });

  it('returns null for an absent id', async () => {
    const store = new FolderBlobStore({ root });
    expect(await store.get('t', randomUUID())).toBeNull();
  });

  it("keeps tenants apart: another tenant's id is absent", async () => {
    const store = new FolderBlobStore({ root });
    const id = randomUUID();
    await store.put('alice', id, bytes('alice data'));
    expect(await store.get('bob', id)).toBeNull();
    // The same id under another tenant is a different blob.
    await store.put('bob', id, bytes('bob data'));
    expect(new TextDecoder().decode((await store.get('alice', id))!)).toBe('alice data');
    expect(new TextDecoder().decode((await store.get('bob', id))!)).toBe('bob data');
  });

  it('is write-once: identical bytes are a no-op, different bytes are refused and the first blob stays', async () => {
    const store = new FolderBlobStore({ root });
    const id = randomUUID();
    await store.put('t', id, bytes('first'));
    await expect(store.put('t', id, bytes('first'))).resolves.toBeUndefined();
    const refusal = await store.put('t', id, bytes('second')).catch((e: unknown) => e);
    expect(refusal).toBeInstanceOf(BlobStoreError);
    expect((refusal as BlobStoreError).code).toBe('blob.write_once');
    expect(new TextDecoder().decode((await store.get('t', id))!)).toBe('first');
    expect((await filesUnder(root)).length).toBe(1);
  });

  it('lets exactly one of two racing writers of the same id win; the blob is never a mix', async () => {
    const store = new FolderBlobStore({ root });
    const id = randomUUID();
    const a = new Uint8Array(256 * 1024).fill(0x61);
    const b = new Uint8Array(256 * 1024).fill(0x62);
    const results = await Promise.allSettled([store.put('t', id, a), store.put('t', id, b)]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect((rejected.reason as BlobStoreError).code).toBe('blob.write_once');
    const stored = (await store.get('t', id))!;
    expect(stored.byteLength).toBe(a.byteLength);
    expect(new Set(stored).size).toBe(1);
    expect((await filesUnder(root)).length).toBe(1);
  });

  it('writes atomically: the final name appears only complete, never as a partial file', async () => {
    const store = new FolderBlobStore({ root });
    const id = randomUUID();
    const big = new Uint8Array(4 * 1024 * 1024).fill(7);
    const file = join(root, tenantFolder('t'), id.slice(0, 2), id);
    const sizes: number[] = [];
    let done = false;
    const watcher = (async () => {
      while (!done) {
        const s = await stat(file).catch(() => null);
        if (s !== null) sizes.push(s.size);
        await new Promise((r) => setImmediate(r));
      }
    })();
    await store.put('t', id, big);
    done = true;
    await watcher;
    expect(sizes.every((size) => size === big.byteLength)).toBe(true);
    expect((await stat(file)).size).toBe(big.byteLength);
  });

  it('refuses ids that are not UUIDs, so no path can climb out of the tenant folder', async () => {
    const store = new FolderBlobStore({ root });
    // Something a traversal would reach if ids were used as paths.
    await writeFile(join(root, 'x'), 'outside');
    for (const id of ['../x', '../../x', 'x', '', `${randomUUID()}/..`, '/etc/passwd', `${randomUUID()}\0`]) {
      for (const call of [() => store.put('t', id, bytes('evil')), () => store.get('t', id)]) {
        const error = await call().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(BlobStoreError);
        expect((error as BlobStoreError).code).toBe('blob.invalid_artifact_id');
      }
    }
    expect(await readFile(join(root, 'x'), 'utf8')).toBe('outside');
    expect(await filesUnder(root)).toEqual([join(root, 'x')]);
  });

  it('refuses an empty tenant id', async () => {
    const store = new FolderBlobStore({ root });
    const error = await store.get('', randomUUID()).catch((e: unknown) => e);
    expect((error as BlobStoreError).code).toBe('blob.invalid_tenant');
  });

  it('treats an upper-case UUID as the same artifact as its lower-case form', async () => {
    const store = new FolderBlobStore({ root });
    const id = randomUUID();
    await store.put('t', id.toUpperCase(), bytes('one'));
    expect(new TextDecoder().decode((await store.get('t', id))!)).toBe('one');
  });
});
