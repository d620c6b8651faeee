import { createHash, randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ArtifactRef } from '@veetbot/domain';
import type { BlobStore } from '@veetbot/ports';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ArtifactIntegrityError, BlobStoreError } from '../src/errors';
import { createArtifactWriterFactory, FolderBlobStore, readArtifact } from '../src/index';
import { tenantFolder } from '../src/folder-blob-store';
import { MemoryArtifactStore } from './memory-artifact-store';

let root: string;
let blobs: FolderBlobStore;
let artifacts: MemoryArtifactStore;
const now = new Date('2025-03-01T12:00:00.000Z');
const clock = { now: () => now };
const runId = randomUUID();
const invocationId = randomUUID();

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'artifact-writer-'));
  blobs = new FolderBlobStore({ root });
  artifacts = new MemoryArtifactStore();
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const bytes = (text: string) => new TextEncoder().encode(text);

async function blobFiles(): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

describe('createArtifactWriterFactory', () => {
  it('writes the blob and the row and returns a reference with the right sha256 and length', async () => {
    const writer = createArtifactWriterFactory({ blobs, artifacts, clock }).forScope({ tenantId: 'acme', runId, invocationId });
    const data = bytes('héllo, artifact\n');
    const ref = await writer.write({ bytes: data, mediaType: 'text/plain', trust: 'external_untrusted' });

    const sha256 = createHash('sha256').update(data).digest('hex');
    expect(ArtifactRef.parse(ref)).toEqual(ref);
    expect(ref).toEqual({
      artifact_id: ref.artifact_id,
      media_type: 'text/plain',
      bytes: data.byteLength,
      sha256,
      trust: 'external_untrusted',
    });
    expect(ref.bytes).toBe(17); // é is two bytes in UTF-8

    expect(await artifacts.get('acme', ref.artifact_id)).toEqual({
      id: ref.artifact_id,
      tenantId: 'acme',
      runId,
      invocationId,
      mediaType: 'text/plain',
      bytes: 17,
      sha256,
      trust: 'external_untrusted',
      createdAt: now,
    });
    const file = join(root, tenantFolder('acme'), ref.artifact_id.slice(0, 2), ref.artifact_id);
    expect(new Uint8Array(await readFile(file))).toEqual(data);
  });

  it('gives every write a fresh id, including for identical bytes', async () => {
    const writer = createArtifactWriterFactory({ blobs, artifacts, clock }).forScope({ tenantId: 'acme', runId, invocationId: null });
    const a = await writer.write({ bytes: bytes('same'), mediaType: 'text/plain', trust: 'internal_tool' });
    const b = await writer.write({ bytes: bytes('same'), mediaType: 'text/plain', trust: 'internal_tool' });
    expect(a.artifact_id).not.toBe(b.artifact_id);
    expect(a.sha256).toBe(b.sha256);
    expect((await artifacts.listForRun('acme', runId)).map((r) => r.invocationId)).toEqual([null, null]);
  });

  it("hashes and stores a copy: mutating the caller's buffer after write() does not change the artifact", async () => {
    const writer = createArtifactWriterFactory({ blobs, artifacts, clock }).forScope({ tenantId: 'acme', runId, invocationId });
    const data = bytes('original');
    const pending = writer.write({ bytes: data, mediaType: 'text/plain', trust: 'external_untrusted' });
    data.fill(0);
    const ref = await pending;
    const read = await readArtifact({ blobs, artifacts }, 'acme', ref.artifact_id);
    expect(new TextDecoder().decode(read!.bytes)).toBe('original');
  });

  it('hands a tool a writer and nothing that reads', () => {
    const writer = createArtifactWriterFactory({ blobs, artifacts, clock }).forScope({ tenantId: 'acme', runId, invocationId });
    expect(Object.keys(writer)).toEqual(['write']);
    expect(Object.isFrozen(writer)).toBe(true);
    expect((writer as unknown as Record<string, unknown>).read).toBeUndefined();
  });

  it('refuses an empty media type or an unknown trust label before writing anything', async () => {
    const writer = createArtifactWriterFactory({ blobs, artifacts, clock }).forScope({ tenantId: 'acme', runId, invocationId });
    await expect(writer.write({ bytes: bytes('x'), mediaType: '', trust: 'external_untrusted' })).rejects.toThrow();
    await expect(writer.write({ bytes: bytes('x'), mediaType: 'text/plain', trust: 'bogus' as never })).rejects.toThrow();
    expect(await blobFiles()).toEqual([]);
    expect(artifacts.rows.size).toBe(0);
  });

  it('writes the blob before the row: a failed insert leaves an orphan blob that no read can reach', async () => {
    const order: string[] = [];
    const tracingBlobs: BlobStore = {
      put: async (t, id, b) => {
        order.push('blob');
        await blobs.put(t, id, b);
      },
      get: (t, id) => blobs.get(t, id),
    };
    const tracingArtifacts = new MemoryArtifactStore();
    const insert = tracingArtifacts.insert.bind(tracingArtifacts);
    tracingArtifacts.insert = async (t, a) => {
      order.push('row');
      return insert(t, a);
    };
    const writer = createArtifactWriterFactory({ blobs: tracingBlobs, artifacts: tracingArtifacts, clock }).forScope({
      tenantId: 'acme',
      runId,
      invocationId,
    });
    await writer.write({ bytes: bytes('ok'), mediaType: 'text/plain', trust: 'external_untrusted' });
    expect(order).toEqual(['blob', 'row']);

    tracingArtifacts.failNextInsert = new Error('database down');
    await expect(writer.write({ bytes: bytes('orphan'), mediaType: 'text/plain', trust: 'external_untrusted' })).rejects.toThrow(
      'database down',
    );
    expect(order).toEqual(['blob', 'row', 'blob', 'row']);
    // Two blobs on disk, one row: the orphan is garbage-collectable ...
    const files = await blobFiles();
    expect(files).toHaveLength(2);
    expect(tracingArtifacts.rows.size).toBe(1);
    const orphanId = files.map((f) => f.split('/').at(-1)!).find((id) => !tracingArtifacts.rows.has(`acme\u0000${id}`))!;
    expect(await blobs.get('acme', orphanId)).not.toBeNull();
    // ... and never readable: reads go through the row.
    expect(await readArtifact({ blobs, artifacts: tracingArtifacts }, 'acme', orphanId)).toBeNull();
  });

  it('propagates a blob failure without inserting a row', async () => {
    const failing: BlobStore = {
      put: async () => {
        throw new BlobStoreError('blob.io', 'disk full');
      },
      get: async () => null,
    };
    const writer = createArtifactWriterFactory({ blobs: failing, artifacts, clock }).forScope({ tenantId: 'acme', runId, invocationId });
    await expect(writer.write({ bytes: bytes('x'), mediaType: 'text/plain', trust: 'external_untrusted' })).rejects.toMatchObject({
      code: 'blob.io',
    });
    expect(artifacts.rows.size).toBe(0);
  });
});

describe('readArtifact', () => {
  async function written(tenantId = 'acme', text = 'payload') {
    const writer = createArtifactWriterFactory({ blobs, artifacts, clock }).forScope({ tenantId, runId, invocationId });
    return writer.write({ bytes: bytes(text), mediaType: 'application/octet-stream', trust: 'external_untrusted' });
  }

  it('returns the row and the bytes to the owning tenant', async () => {
    const ref = await written();
    const read = await readArtifact({ blobs, artifacts }, 'acme', ref.artifact_id);
    expect(read!.row.id).toBe(ref.artifact_id);
    expect(read!.row.sha256).toBe(ref.sha256);
    expect(new TextDecoder().decode(read!.bytes)).toBe('payload');
  });

  it('returns null to another tenant and for an unknown id', async () => {
    const ref = await written();
    expect(await readArtifact({ blobs, artifacts }, 'other', ref.artifact_id)).toBeNull();
    expect(await readArtifact({ blobs, artifacts }, 'acme', randomUUID())).toBeNull();
  });

  it('refuses a non-UUID id with a typed error before touching either store', async () => {
    const error = await readArtifact({ blobs, artifacts }, 'acme', '../x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BlobStoreError);
    expect((error as BlobStoreError).code).toBe('blob.invalid_artifact_id');
  });

  it('detects a tampered blob (same length, different bytes)', async () => {
    const ref = await written();
    const file = join(root, tenantFolder('acme'), ref.artifact_id.slice(0, 2), ref.artifact_id);
    await writeFile(file, 'PAYLOAD');
    const error = await readArtifact({ blobs, artifacts }, 'acme', ref.artifact_id).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ArtifactIntegrityError);
    expect((error as ArtifactIntegrityError).code).toBe('artifact.integrity_mismatch');
    expect((error as ArtifactIntegrityError).artifactId).toBe(ref.artifact_id);
  });

  it('detects a truncated blob and a missing blob', async () => {
    const ref = await written();
    const file = join(root, tenantFolder('acme'), ref.artifact_id.slice(0, 2), ref.artifact_id);
    await writeFile(file, 'pay');
    await expect(readArtifact({ blobs, artifacts }, 'acme', ref.artifact_id)).rejects.toMatchObject({
      code: 'artifact.integrity_mismatch',
    });
    await rm(file);
    await expect(readArtifact({ blobs, artifacts }, 'acme', ref.artifact_id)).rejects.toMatchObject({ code: 'artifact.blob_missing' });
  });
});
