import { randomUUID } from 'node:crypto';
import { VeetbotError } from '@veetbot/domain';
import type { BlobStore } from '@veetbot/ports';
import { describe, expect, it } from 'vitest';

/**
 * ports.BlobStore (ports/artifacts.ts), stated once: "Write once; the key is (tenant, artifact
 * id)" and "Null when absent (or another tenant's)". § Output: "The artifact inherits the
 * result's trust label and is tenant-scoped". `make` gives a fresh, empty store per test.
 */
export function describeBlobStoreContract(name: string, make: () => BlobStore | Promise<BlobStore>): void {
  const text = (value: string) => new TextEncoder().encode(value);

  describe(`BlobStore contract: ${name}`, () => {
    it('gives back exactly the bytes put, binary and empty ones included', async () => {
      const store = await make();
      const every = Uint8Array.from({ length: 256 }, (_, i) => i);
      const [binary, empty] = [randomUUID(), randomUUID()];
      await store.put('tenant-a', binary, every);
      await store.put('tenant-a', empty, new Uint8Array(0));
      expect(await store.get('tenant-a', binary)).toEqual(every);
      expect(await store.get('tenant-a', empty)).toEqual(new Uint8Array(0));
    });

    it('is null for an absent id', async () => {
      const store = await make();
      expect(await store.get('tenant-a', randomUUID())).toBeNull();
    });

    it("keeps tenants apart: another tenant's id is null, and the same id under two tenants is two blobs", async () => {
      const store = await make();
      const id = randomUUID();
      await store.put('tenant-a', id, text('a data'));
      expect(await store.get('tenant-b', id)).toBeNull();
      await store.put('tenant-b', id, text('b data'));
      expect(await store.get('tenant-a', id)).toEqual(text('a data'));
      expect(await store.get('tenant-b', id)).toEqual(text('b data'));
    });

    it('is write-once: different bytes under a key are refused with a typed error and the first stay; the same bytes again (a retry) are not', async () => {
      const store = await make();
      const id = randomUUID();
      await store.put('tenant-a', id, text('first'));
      await expect(store.put('tenant-a', id, text('first'))).resolves.toBeUndefined();
      const refusal = await store.put('tenant-a', id, text('second')).then(
        () => null,
        (e: unknown) => e,
      );
      expect(VeetbotError.isInstance(refusal)).toBe(true);
      expect(await store.get('tenant-a', id)).toEqual(text('first'));
    });

    it("owns its bytes: neither the caller's buffer after put nor a returned buffer changes what is stored", async () => {
      const store = await make();
      const id = randomUUID();
      const buffer = text('original');
      await store.put('tenant-a', id, buffer);
      buffer.fill(0);
      const read = (await store.get('tenant-a', id))!;
      expect(read).toEqual(text('original'));
      read.fill(0);
      expect(await store.get('tenant-a', id)).toEqual(text('original'));
    });
  });
}
