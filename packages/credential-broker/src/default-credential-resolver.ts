import { constants } from 'node:fs';
import { type FileHandle, open, realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { ConfigurationError } from '@veetbot/domain';
import type { CredentialResolver } from '@veetbot/ports';
import { parseCredentialRef } from './credential-ref';
import { CredentialError } from './errors';
import { Secret } from './secret';

/** A credential file larger than this is refused: secrets are small, a log file is not. */
export const MAXIMUM_CREDENTIAL_FILE_BYTES = 64 * 1024;

export interface DefaultCredentialResolverOptions {
  /** Where `env:` references look. Default: process.env, read at every call. */
  readonly env?: Record<string, string | undefined>;
  /** When given, a `file:` reference must resolve inside one of these absolute folders. */
  readonly allowFileRoots?: readonly string[];
}

/**
 * RULINGS.md "Credentials": the default broker behind ToolExecutionContext.credentials.
 * Resolves at every call, with no cache, so a rotated file or variable takes effect without a
 * restart (§ "A connection that is re-dialled re-resolves").
 */
export class DefaultCredentialResolver implements CredentialResolver {
  readonly #env: Record<string, string | undefined>;
  readonly #roots: readonly string[] | null;

  constructor(options: DefaultCredentialResolverOptions = {}) {
    this.#env = options.env ?? process.env;
    if (options.allowFileRoots === undefined) {
      this.#roots = null;
    } else {
      for (const root of options.allowFileRoots) {
        if (typeof root !== 'string' || !isAbsolute(root)) {
          throw new ConfigurationError('config.credential_file_root', 'Every allowed credential file root must be an absolute path.');
        }
      }
      this.#roots = options.allowFileRoots.map((root) => resolve(root));
    }
  }

  async resolve(credentialRef: string): Promise<Secret> {
    const ref = parseCredentialRef(credentialRef);
    if (ref === null) {
      throw new CredentialError('credential.invalid_ref', null, 'Not a credential reference: expected env:NAME or file:/absolute/path.');
    }
    if (ref.kind === 'secret') {
      // A tenant's secret is resolved only inside that tenant (TenantScopedCredentialResolvers).
      throw new CredentialError(
        'credential.ref_not_allowed',
        credentialRef,
        `Credential ${credentialRef}: a secret: reference is resolved only for a tenant's own server.`,
      );
    }
    if (ref.kind === 'env') {
      const value = this.#env[ref.name];
      if (value === undefined || value === '') {
        throw new CredentialError('credential.not_found', credentialRef, `Credential ${credentialRef}: the variable is unset or empty.`);
      }
      return new Secret(value);
    }
    return new Secret(await this.#readFile(credentialRef, ref.path));
  }

  async #readFile(reference: string, path: string): Promise<string> {
    const refused = (why: string) => new CredentialError('credential.file_refused', reference, `Credential ${reference}: ${why}.`);
    const notFound = () => new CredentialError('credential.not_found', reference, `Credential ${reference}: the file does not exist.`);

    if (this.#roots !== null) {
      // Compare real paths: a symlinked folder inside a root must not lead outside it.
      let real: string;
      try {
        real = await realpath(path);
      } catch (cause) {
        throw errno(cause) === 'ENOENT' ? notFound() : refused(`the file cannot be reached (${errno(cause) ?? 'error'})`);
      }
      const roots = await Promise.all(this.#roots.map((root) => realpath(root).catch(() => null)));
      if (!roots.some((root) => root !== null && isInside(root, real))) throw refused('the file is outside every allowed folder');
    }

    // O_NOFOLLOW: the last component may not be a symlink, checked by the kernel at open time
    // (no window between a check and the read).
    let handle: FileHandle;
    try {
      handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    } catch (cause) {
      const code = errno(cause);
      if (code === 'ENOENT') throw notFound();
      if (code === 'ELOOP' || code === 'EMLINK') throw refused('the file is a symlink');
      throw refused(`the file cannot be opened (${code ?? 'error'})`);
    }
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw refused('not a regular file');
      if (info.size > MAXIMUM_CREDENTIAL_FILE_BYTES) throw refused(`the file is larger than ${MAXIMUM_CREDENTIAL_FILE_BYTES} bytes`);
      // Read one byte past the limit: a file that grew after the stat is still refused.
      const buffer = Buffer.alloc(MAXIMUM_CREDENTIAL_FILE_BYTES + 1);
      let length = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, null);
        if (bytesRead === 0) break;
        length += bytesRead;
        if (length === buffer.length) throw refused(`the file is larger than ${MAXIMUM_CREDENTIAL_FILE_BYTES} bytes`);
      }
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(buffer.subarray(0, length));
      } catch {
        throw refused('the file is not UTF-8 text');
      }
      const value = text.replace(/(?:\r?\n)+$/, '');
      if (value === '') throw new CredentialError('credential.not_found', reference, `Credential ${reference}: the file is empty.`);
      return value;
    } finally {
      await handle.close();
    }
  }
}

function isInside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel !== '' && !rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel);
}

function errno(cause: unknown): string | undefined {
  return typeof cause === 'object' && cause !== null ? ((cause as { code?: unknown }).code as string | undefined) : undefined;
}
