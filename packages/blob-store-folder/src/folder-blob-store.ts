import { createHash, randomUUID } from 'node:crypto';
import { constants } from 'node:fs';
import { link, mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { BlobStore } from '@veetbot/ports';
import { isArtifactId } from './artifact-id';
import { BlobStoreError } from './errors';

export interface FolderBlobStoreOptions {
  /** The folder that holds every tenant's blobs. Created (0700) when absent. */
  readonly root: string;
}

const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

/**
 * ports.BlobStore over a folder (§ Output: "the artifact ... is tenant-scoped").
 *
 * Layout: `<root>/<tenant-hash>/<aa>/<artifact_id>`, tenant-hash = the first 32 hex digits of
 * sha256(tenantId) (tenant ids are arbitrary strings, not path-safe), `aa` = the id's first two
 * hex digits (keeps folders small). Artifact ids must be UUIDs, so the file name can never
 * climb out of the tenant's folder, and another tenant's id is simply absent here.
 *
 * Writes are atomic and write-once: bytes go to a 0600 temp file in the final folder, are
 * fsynced, and are then hard-linked to the final name — a link, unlike rename, fails when the
 * name exists, so two racing writers cannot replace each other's blob. Re-putting identical
 * bytes is a no-op (a retried write); different bytes are `blob.write_once`.
 */
export class FolderBlobStore implements BlobStore {
  readonly #root: string;

  constructor(options: FolderBlobStoreOptions) {
    if (typeof options.root !== 'string' || options.root.length === 0) {
      throw new BlobStoreError('blob.io', 'FolderBlobStore needs a root folder.');
    }
    this.#root = resolve(options.root);
  }

  async put(tenantId: string, artifactId: string, bytes: Uint8Array): Promise<void> {
    const { folder, file } = this.#locate(tenantId, artifactId);
    const data = Buffer.from(bytes);
    try {
      await mkdir(folder, { recursive: true, mode: DIR_MODE });
    } catch (cause) {
      throw ioError('create the blob folder', cause);
    }
    const temp = join(folder, `.${artifactId}.${randomUUID()}.tmp`);
    try {
      const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, FILE_MODE);
      try {
        await handle.writeFile(data);
        await handle.sync();
      } finally {
        await handle.close();
      }
      await this.#publish(temp, file, data, artifactId);
    } finally {
      await unlink(temp).catch(() => undefined);
    }
  }

  async get(tenantId: string, artifactId: string): Promise<Uint8Array | null> {
    const { file } = this.#locate(tenantId, artifactId);
    try {
      return new Uint8Array(await readFile(file));
    } catch (cause) {
      if (errno(cause) === 'ENOENT') return null;
      throw ioError('read the blob', cause);
    }
  }

  /** Link the finished temp file to its final name without ever replacing an existing blob. */
  async #publish(temp: string, file: string, data: Buffer, artifactId: string): Promise<void> {
    try {
      await link(temp, file);
      await syncFolder(file);
      return;
    } catch (cause) {
      const code = errno(cause);
      if (code === 'EEXIST') return this.#sameOrRefuse(file, data, artifactId);
      if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw ioError('publish the blob', cause);
    }
    // A file system without hard links: check, then rename (atomic, but a racing writer of the
    // same id could win between the two; ids are fresh UUIDs, so only a retry ever races).
    const existing = await stat(file).catch(() => null);
    if (existing !== null) return this.#sameOrRefuse(file, data, artifactId);
    try {
      await rename(temp, file);
    } catch (cause) {
      throw ioError('publish the blob', cause);
    }
  }

  async #sameOrRefuse(file: string, data: Buffer, artifactId: string): Promise<void> {
    const current = await readFile(file).catch((cause: unknown) => {
      throw ioError('read the existing blob', cause);
    });
    if (current.equals(data)) return;
    throw new BlobStoreError('blob.write_once', `A different blob already exists for artifact ${artifactId}; blobs are write-once.`);
  }

  #locate(tenantId: string, artifactId: string): { folder: string; file: string } {
    if (typeof tenantId !== 'string' || tenantId.length === 0) {
      throw new BlobStoreError('blob.invalid_tenant', 'A blob needs a non-empty tenant id.');
    }
    if (!isArtifactId(artifactId)) {
      throw new BlobStoreError('blob.invalid_artifact_id', 'An artifact id must be a UUID.');
    }
    const id = artifactId.toLowerCase();
    const folder = join(this.#root, tenantFolder(tenantId), id.slice(0, 2));
    return { folder, file: join(folder, id) };
  }
}

/** The tenant's folder name: tenant ids are not path-safe, their hash is. */
export function tenantFolder(tenantId: string): string {
  return createHash('sha256').update(tenantId, 'utf8').digest('hex').slice(0, 32);
}

async function syncFolder(file: string): Promise<void> {
  // Make the new directory entry durable; best effort (not every platform can fsync a folder).
  const handle = await open(join(file, '..'), constants.O_RDONLY).catch(() => null);
  if (handle === null) return;
  await handle.sync().catch(() => undefined);
  await handle.close();
}

function errno(cause: unknown): string | undefined {
  return typeof cause === 'object' && cause !== null ? ((cause as { code?: unknown }).code as string | undefined) : undefined;
}

function ioError(what: string, cause: unknown): BlobStoreError {
  return new BlobStoreError('blob.io', `Could not ${what} (${errno(cause) ?? 'unknown error'}).`, { cause });
}
