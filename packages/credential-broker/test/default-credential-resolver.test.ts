import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inspect } from 'node:util';
import { ConfigurationError, VeetbotError } from '@veetbot/domain';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CredentialError, DefaultCredentialResolver } from '../src/index';
import { MAXIMUM_CREDENTIAL_FILE_BYTES } from '../src/default-credential-resolver';
import { Secret } from '../src/secret';

const VALUE = 'tok-8d1b77-SHOULD-NEVER-APPEAR';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'credential-broker-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function failure(promise: Promise<unknown>): Promise<CredentialError> {
  const error = await promise.then(
    () => {
      throw new Error('expected the resolve to fail');
    },
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(CredentialError);
  expect(VeetbotError.isInstance(error)).toBe(true);
  const e = error as CredentialError;
  // Whatever went wrong, the value appears nowhere a log could pick it up.
  for (const shown of [e.message, String(e.stack), inspect(e, { depth: 10, showHidden: true }), JSON.stringify(e)]) {
    expect(shown).not.toContain(VALUE);
  }
  return e;
}

describe('DefaultCredentialResolver: env:NAME', () => {
  it('resolves a variable to a Secret', async () => {
    const broker = new DefaultCredentialResolver({ env: { API_TOKEN: VALUE } });
    const secret = await broker.resolve('env:API_TOKEN');
    expect(secret).toBeInstanceOf(Secret);
    expect(secret.reveal()).toBe(VALUE);
    expect(JSON.stringify({ secret })).not.toContain(VALUE);
  });

  it('reads process.env by default', async () => {
    process.env.VEETBOT_BROKER_TEST_TOKEN = VALUE;
    try {
      expect((await new DefaultCredentialResolver().resolve('env:VEETBOT_BROKER_TEST_TOKEN')).reveal()).toBe(VALUE);
    } finally {
      delete process.env.VEETBOT_BROKER_TEST_TOKEN;
    }
  });

  it('is credential.not_found for an unset or empty variable, naming the reference', async () => {
    const broker = new DefaultCredentialResolver({ env: { EMPTY: '' } });
    for (const ref of ['env:MISSING', 'env:EMPTY']) {
      const e = await failure(broker.resolve(ref));
      expect(e.code).toBe('credential.not_found');
      expect(e.reference).toBe(ref);
      expect(e.message).toContain(ref);
    }
  });

  it('is credential.invalid_ref for a bad name, and does not echo a malformed reference', async () => {
    const broker = new DefaultCredentialResolver({ env: { lower: VALUE } });
    for (const ref of ['env:lower', 'env:', 'env:A-B', VALUE, 'vault:x', '']) {
      const e = await failure(broker.resolve(ref));
      expect(e.code).toBe('credential.invalid_ref');
      expect(e.reference).toBeNull();
      // The generic message names the grammar ("env:NAME"); a rejected reference never appears.
      if (ref.length > 'env:'.length) expect(e.message).not.toContain(ref);
    }
  });

  it('re-resolves at every call: a rotated variable takes effect without a new broker', async () => {
    const env: Record<string, string | undefined> = { API_TOKEN: 'first' };
    const broker = new DefaultCredentialResolver({ env });
    expect((await broker.resolve('env:API_TOKEN')).reveal()).toBe('first');
    env.API_TOKEN = 'second';
    expect((await broker.resolve('env:API_TOKEN')).reveal()).toBe('second');
    delete env.API_TOKEN;
    expect((await failure(broker.resolve('env:API_TOKEN'))).code).toBe('credential.not_found');
  });
});

describe('DefaultCredentialResolver: file:/path', () => {
  it('reads the file and trims the trailing newline', async () => {
    await writeFile(join(dir, 'token'), `${VALUE}\n`);
    await writeFile(join(dir, 'crlf'), `${VALUE}\r\n`);
    await writeFile(join(dir, 'inner'), ` a\nb \n`);
    const broker = new DefaultCredentialResolver({ env: {} });
    expect((await broker.resolve(`file:${join(dir, 'token')}`)).reveal()).toBe(VALUE);
    expect((await broker.resolve(`file:${join(dir, 'crlf')}`)).reveal()).toBe(VALUE);
    // Only the trailing newline goes; inner newlines and spaces are part of the value.
    expect((await broker.resolve(`file:${join(dir, 'inner')}`)).reveal()).toBe(' a\nb ');
  });

  it('re-reads the file at every call: rotation takes effect without a restart', async () => {
    const file = join(dir, 'token');
    await writeFile(file, 'first\n');
    const broker = new DefaultCredentialResolver({ env: {}, allowFileRoots: [dir] });
    expect((await broker.resolve(`file:${file}`)).reveal()).toBe('first');
    await writeFile(file, 'second\n');
    expect((await broker.resolve(`file:${file}`)).reveal()).toBe('second');
  });

  it('is credential.not_found for a missing or empty file', async () => {
    await writeFile(join(dir, 'empty'), '\n');
    const broker = new DefaultCredentialResolver({ env: {} });
    for (const name of ['missing', 'empty']) {
      const ref = `file:${join(dir, name)}`;
      const e = await failure(broker.resolve(ref));
      expect(e.code).toBe('credential.not_found');
      expect(e.reference).toBe(ref);
    }
    // Also when an allow-list is in force (the realpath check sees the absence first).
    const e = await failure(new DefaultCredentialResolver({ env: {}, allowFileRoots: [dir] }).resolve(`file:${join(dir, 'missing')}`));
    expect(e.code).toBe('credential.not_found');
  });

  it('is credential.invalid_ref for a relative path or a .. segment', async () => {
    const broker = new DefaultCredentialResolver({ env: {} });
    for (const ref of ['file:token', `file:${dir}/../etc/passwd`, 'file:']) {
      expect((await failure(broker.resolve(ref))).code).toBe('credential.invalid_ref');
    }
  });

  it('refuses a symlink, even to a file inside the allowed folder', async () => {
    await writeFile(join(dir, 'real'), VALUE);
    await symlink(join(dir, 'real'), join(dir, 'link'));
    for (const broker of [new DefaultCredentialResolver({ env: {} }), new DefaultCredentialResolver({ env: {}, allowFileRoots: [dir] })]) {
      const e = await failure(broker.resolve(`file:${join(dir, 'link')}`));
      expect(e.code).toBe('credential.file_refused');
      expect(e.message).toContain('symlink');
    }
  });

  it('refuses a file outside every allowed root, also when reached through a symlinked folder', async () => {
    const allowed = join(dir, 'allowed');
    const outside = join(dir, 'outside');
    await mkdir(allowed);
    await mkdir(outside);
    await writeFile(join(outside, 'token'), VALUE);
    await symlink(outside, join(allowed, 'escape'));
    const broker = new DefaultCredentialResolver({ env: {}, allowFileRoots: [allowed] });
    for (const path of [join(outside, 'token'), join(allowed, 'escape', 'token')]) {
      const e = await failure(broker.resolve(`file:${path}`));
      expect(e.code).toBe('credential.file_refused');
      expect(e.message).toContain('outside');
    }
    // The same file is fine once its folder is allowed.
    const wider = new DefaultCredentialResolver({ env: {}, allowFileRoots: [allowed, outside] });
    expect((await wider.resolve(`file:${join(outside, 'token')}`)).reveal()).toBe(VALUE);
  });

  it('refuses the root folder itself and anything that is not a regular file', async () => {
    await mkdir(join(dir, 'folder'));
    const broker = new DefaultCredentialResolver({ env: {}, allowFileRoots: [dir] });
    expect((await failure(broker.resolve(`file:${dir}`))).code).toBe('credential.file_refused');
    const unrestricted = new DefaultCredentialResolver({ env: {} });
    const e = await failure(unrestricted.resolve(`file:${join(dir, 'folder')}`));
    expect(e.code).toBe('credential.file_refused');
    expect(e.message).toContain('regular file');
  });

  it('accepts a file of exactly 64 KiB and refuses one byte more, without echoing the contents', async () => {
    const atLimit = VALUE + 'x'.repeat(MAXIMUM_CREDENTIAL_FILE_BYTES - VALUE.length);
    await writeFile(join(dir, 'limit'), atLimit);
    await writeFile(join(dir, 'over'), `${atLimit}y`);
    const broker = new DefaultCredentialResolver({ env: {} });
    expect(MAXIMUM_CREDENTIAL_FILE_BYTES).toBe(65536);
    expect((await broker.resolve(`file:${join(dir, 'limit')}`)).reveal()).toBe(atLimit);
    const e = await failure(broker.resolve(`file:${join(dir, 'over')}`));
    expect(e.code).toBe('credential.file_refused');
    expect(e.message).toContain('larger than');
  });

  it('refuses a file that is not UTF-8 without echoing its bytes', async () => {
    await writeFile(join(dir, 'binary'), Buffer.concat([Buffer.from(VALUE), Buffer.from([0xff, 0xfe])]));
    const e = await failure(new DefaultCredentialResolver({ env: {} }).resolve(`file:${join(dir, 'binary')}`));
    expect(e.code).toBe('credential.file_refused');
  });

  it('refuses a named pipe without blocking on it', async () => {
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const e = await failure(new DefaultCredentialResolver({ env: {} }).resolve(`file:${fifo}`));
    expect(e.code).toBe('credential.file_refused');
    expect(e.message).toContain('regular file');
  });
});

describe('DefaultCredentialResolver: configuration', () => {
  it('refuses a relative allowed root', () => {
    expect(() => new DefaultCredentialResolver({ allowFileRoots: ['secrets'] })).toThrow(ConfigurationError);
  });
});
