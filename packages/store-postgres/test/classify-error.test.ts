import { type AddressInfo, createServer } from 'node:net';
import { StoreError } from '@veetbot/domain';
import { DrizzleQueryError } from 'drizzle-orm/errors';
import { describe, expect, it } from 'vitest';
import { classifyDriverError } from '../src/classify-error';
import { openDatabase } from '../src/database';

/** What node-postgres and PGlite throw: an Error with the server's SQLSTATE in `code`. */
function driverError(code: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(`server says ${code}: Key (email)=(a@b.c) already exists`), { code, ...extra });
}

describe('classifyDriverError', () => {
  it.each([
    ['23505', 'store.unique_violation', false],
    ['23502', 'store.constraint', false],
    ['23503', 'store.constraint', false],
    ['40001', 'store.serialization', true],
    ['40P01', 'store.serialization', true],
    ['57014', 'store.cancelled', false],
    ['08006', 'store.connection', true],
    ['08001', 'store.connection', true],
    ['57P01', 'store.connection', true],
    ['42501', 'store.forbidden', false],
    ['55000', 'store.invalid_transition', false],
    ['22P02', 'store.unknown', false],
  ])('SQLSTATE %s -> %s (retryable %s)', (sqlstate, code, retryable) => {
    const error = classifyDriverError(driverError(sqlstate));
    expect(StoreError.isInstance(error)).toBe(true);
    expect(error.code).toBe(code);
    expect(error.retryable).toBe(retryable);
    expect((error as StoreError).sqlstate).toBe(sqlstate);
  });

  it("finds the SQLSTATE through drizzle's DrizzleQueryError wrapper and names the constraint", () => {
    const wrapped = new DrizzleQueryError(
      'insert ...',
      [],
      driverError('23505', { constraint: 'tool_invocations_idempotency_key_unique' }) as Error,
    );
    const error = classifyDriverError(wrapped);
    expect(error.code).toBe('store.unique_violation');
    expect(error.message).toContain('tool_invocations_idempotency_key_unique');
    // Row data in the driver's message never becomes the error's text.
    expect(error.message).not.toContain('a@b.c');
    expect(error.cause).toBe(wrapped);
  });

  it('passes a VeetbotError through unchanged', () => {
    const original = new StoreError('store.fenced', 'fenced');
    expect(classifyDriverError(original)).toBe(original);
  });

  it('a database that cannot be reached is store.connection (real socket, closed port)', async () => {
    const database = await openDatabase({ url: 'postgres://postgres@127.0.0.1:1/none', poolSize: 1 });
    try {
      await expect(database.tenant('t', async () => 1)).rejects.toSatisfy(
        (e: unknown) => StoreError.isInstance(e) && e.code === 'store.connection' && e.retryable,
      );
    } finally {
      await database.close();
    }
  });

  it('a connect nobody answers fails store.connection within the connect timeout, not never', async () => {
    // docs/adr/0067: a server that accepts and never speaks (a partition, a server half up).
    const silent = createServer((socket) => socket.on('error', () => undefined));
    await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
    const port = (silent.address() as AddressInfo).port;
    const database = await openDatabase({ url: `postgres://postgres@127.0.0.1:${port}/none`, poolSize: 1, connectTimeoutMs: 300 });
    try {
      const began = Date.now();
      await expect(database.transaction({ role: 'owner' }, async () => 1)).rejects.toSatisfy(
        (e: unknown) => StoreError.isInstance(e) && e.code === 'store.connection' && e.retryable,
      );
      // Not a timing assertion on speed: without the bound this never settles at all.
      expect(Date.now() - began).toBeLessThan(20_000);
    } finally {
      await database.close();
      silent.close();
    }
  });

  it('openDatabase without a url or a data folder is a configuration error', async () => {
    await expect(openDatabase({})).rejects.toMatchObject({ code: 'config.database_missing' });
  });
});
