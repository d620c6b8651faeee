import { constants, type Stats } from 'node:fs';
import { link, open, readFile, stat, unlink } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { CredentialError } from './errors';
import { SECRET_KEY_BYTES, SecretKeyring, secretKey, type SecretKey } from './secret-crypto';

/** The generated key's file name in the data folder (embedded default). */
export const GENERATED_KEY_FILE = 'secrets.key';

export interface SecretKeySettings {
  /** VEETBOT_SECRETS_KEY, VEETBOT_SECRETS_KEY_FILE, VEETBOT_SECRETS_PREVIOUS_KEYS are read here. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** When neither variable is set: read, or generate once, `<dataDir>/secrets.key` (mode 0600). Null: refuse. */
  readonly dataDir: string | null;
}

export interface LoadedKeyring {
  readonly keyring: SecretKeyring;
  /** Where the current key came from (printed at start; never the key). */
  readonly source: 'VEETBOT_SECRETS_KEY' | 'VEETBOT_SECRETS_KEY_FILE' | 'generated' | 'data folder';
  readonly path: string | null;
}

const invalid = (why: string) => new CredentialError('credential.key_invalid', null, why);

/** Strict base64 of exactly 32 bytes (Buffer.from is lenient: a typo must not become a key). */
export function decodeSecretKey(text: string, where: string): SecretKey {
  const trimmed = text.trim();
  const bytes = Buffer.from(trimmed, 'base64');
  if (bytes.length !== SECRET_KEY_BYTES || bytes.toString('base64') !== trimmed) {
    throw invalid(`${where} must be the base64 of exactly ${SECRET_KEY_BYTES} bytes (e.g. openssl rand -base64 32).`);
  }
  return secretKey(bytes);
}

/**
 * ADR 0017, the key: VEETBOT_SECRETS_KEY (base64) or VEETBOT_SECRETS_KEY_FILE (a file holding
 * it, readable by its owner only); neither: the data folder's `secrets.key`, generated once
 * with mode 0600 (the embedded default). VEETBOT_SECRETS_PREVIOUS_KEYS (comma-separated base64)
 * still decrypt during a rotation.
 */
export async function loadSecretKeyring(settings: SecretKeySettings): Promise<LoadedKeyring> {
  const value = (name: string) => {
    const v = settings.env[name]?.trim();
    return v === undefined || v === '' ? null : v;
  };
  const inline = value('VEETBOT_SECRETS_KEY');
  const file = value('VEETBOT_SECRETS_KEY_FILE');
  if (inline !== null && file !== null) throw invalid('Set VEETBOT_SECRETS_KEY or VEETBOT_SECRETS_KEY_FILE, not both.');
  const previousText = value('VEETBOT_SECRETS_PREVIOUS_KEYS');
  const previous =
    previousText === null
      ? []
      : previousText.split(',').map((part, i) => decodeSecretKey(part, `VEETBOT_SECRETS_PREVIOUS_KEYS entry ${i + 1}`));

  if (inline !== null)
    return {
      keyring: new SecretKeyring(decodeSecretKey(inline, 'VEETBOT_SECRETS_KEY'), previous),
      source: 'VEETBOT_SECRETS_KEY',
      path: null,
    };
  if (file !== null) {
    if (!isAbsolute(file)) throw invalid('VEETBOT_SECRETS_KEY_FILE must be an absolute path.');
    return {
      keyring: new SecretKeyring(await readKeyFile(file, 'VEETBOT_SECRETS_KEY_FILE'), previous),
      source: 'VEETBOT_SECRETS_KEY_FILE',
      path: file,
    };
  }
  if (settings.dataDir === null) {
    throw new CredentialError(
      'credential.key_missing',
      null,
      'No secrets key: set VEETBOT_SECRETS_KEY or VEETBOT_SECRETS_KEY_FILE (base64 of 32 random bytes).',
    );
  }
  const path = join(settings.dataDir, GENERATED_KEY_FILE);
  const generated = await generateOnce(path);
  return { keyring: new SecretKeyring(await readKeyFile(path, path), previous), source: generated ? 'generated' : 'data folder', path };
}

/**
 * Written whole to a private temporary file, then linked into place: link() fails when the
 * name exists, so two processes starting on one data folder agree on the first key, and no
 * reader ever sees a half-written file.
 */
async function generateOnce(path: string): Promise<boolean> {
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o600).catch(
    (cause: NodeJS.ErrnoException) => {
      throw invalid(`The secrets key ${path} cannot be created (${cause.code ?? 'error'}).`);
    },
  );
  try {
    await handle.writeFile(`${randomBytes(SECRET_KEY_BYTES).toString('base64')}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await link(temporary, path);
    return true;
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw invalid(`The secrets key ${path} cannot be created (${(cause as NodeJS.ErrnoException).code ?? 'error'}).`);
  } finally {
    await unlink(temporary).catch(() => undefined);
  }
}

/** A key file must be a regular file nobody but its owner can read (like an ssh private key). */
async function readKeyFile(path: string, where: string): Promise<SecretKey> {
  let info: Stats;
  try {
    info = await stat(path);
  } catch (cause) {
    throw invalid(`${where}: the key file cannot be read (${(cause as NodeJS.ErrnoException).code ?? 'error'}).`);
  }
  if (!info.isFile()) throw invalid(`${where}: the key file is not a regular file.`);
  if ((info.mode & 0o077) !== 0) throw invalid(`${where}: the key file is readable by others (chmod 600 it).`);
  return decodeSecretKey(await readFile(path, 'utf8'), where);
}
