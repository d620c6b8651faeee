import { Console } from 'node:console';
import { Writable } from 'node:stream';
import { format, inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REDACTED, SecretRedactor } from '@veetbot/domain';
import { Secret } from '../src/secret';

const VALUE = 'sk-live-4f9c1e-DO-NOT-PRINT';

function consoleOutput(...args: unknown[]): string {
  let out = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      out += String(chunk);
      done();
    },
  });
  const console = new Console({ stdout: stream, stderr: stream });
  console.log(...args);
  console.error(...args);
  console.dir(args[0]);
  console.table([args[0]]);
  return out;
}

describe('Secret', () => {
  it('compares itself to another Secret without revealing either (ADR 0018)', () => {
    expect(new Secret(VALUE).equals(new Secret(VALUE))).toBe(true);
    expect(new Secret(VALUE).equals(new Secret(`${VALUE}x`))).toBe(false);
    expect(new Secret('é').equals(new Secret('e\u0301'))).toBe(false);
    // A look-alike that is not a Secret is never equal, whatever its reveal() says.
    const lookalike = {
      reveal: () => VALUE,
      equals: () => true,
      addTo: () => undefined,
      toString: () => '[secret]',
      toJSON: () => '[secret]',
    };
    expect(new Secret(VALUE).equals(lookalike)).toBe(false);
  });

  it('teaches a SecretRedactor its value and refuses any other object', () => {
    const redactor = new SecretRedactor();
    new Secret(VALUE).addTo(redactor);
    expect(redactor.redactText(`echo ${JSON.stringify(VALUE)} ${Buffer.from(VALUE).toString('base64')}`)).toBe(
      `echo "${REDACTED}" ${REDACTED}`,
    );
    const seen: string[] = [];
    const thief = { add: (v: string) => seen.push(v) } as unknown as SecretRedactor;
    expect(() => new Secret(VALUE).addTo(thief)).toThrow(TypeError);
    expect(seen).toEqual([]);
  });

  it('reveals its value only through reveal()', () => {
    expect(new Secret(VALUE).reveal()).toBe(VALUE);
  });

  it('never shows the value in string conversions or template literals', () => {
    const secret = new Secret(VALUE);
    expect(secret.toString()).toBe('[secret]');
    expect(String(secret)).toBe('[secret]');
    expect(`${secret}`).toBe('[secret]');
    expect(`Bearer ${secret}`).toBe('Bearer [secret]');
    expect(`x${secret}`).toBe('x[secret]');
    expect(secret.valueOf()).toBe('[secret]');
  });

  it('never shows the value in JSON, alone or nested', () => {
    const secret = new Secret(VALUE);
    expect(secret.toJSON()).toBe('[secret]');
    expect(JSON.stringify(secret)).toBe('"[secret]"');
    expect(JSON.stringify({ headers: { authorization: secret }, list: [secret] })).toBe(
      '{"headers":{"authorization":"[secret]"},"list":["[secret]"]}',
    );
  });

  it('never shows the value through util.inspect, util.format or console', () => {
    const secret = new Secret(VALUE);
    expect(inspect(secret)).toBe('[secret]');
    expect(inspect({ nested: { deeper: secret } }, { depth: 10, showHidden: true })).not.toContain(VALUE);
    expect(format('%s %o %O %j', secret, secret, secret, secret)).not.toContain(VALUE);
    const logged = consoleOutput(secret, { token: secret });
    expect(logged).toContain('[secret]');
    expect(logged).not.toContain(VALUE);
  });

  it('has no own property that holds the value: keys, spread, assign, entries, clone', () => {
    const secret = new Secret(VALUE);
    expect(Object.keys(secret)).toEqual([]);
    expect(Object.getOwnPropertyNames(secret)).toEqual([]);
    expect(Reflect.ownKeys(secret)).toEqual([]);
    expect({ ...secret }).toEqual({});
    expect(Object.assign({}, secret)).toEqual({});
    expect(Object.entries(secret)).toEqual([]);
    expect(JSON.stringify(structuredClone(secret))).not.toContain(VALUE);
    const visited: unknown[] = [];
    for (const key in secret) visited.push((secret as unknown as Record<string, unknown>)[key]);
    expect(visited).toEqual([]);
  });

  it('is frozen: no one can attach the value or replace the conversions', () => {
    const secret = new Secret(VALUE);
    expect(Object.isFrozen(secret)).toBe(true);
    expect(() => {
      (secret as unknown as { toString: () => string }).toString = () => VALUE;
    }).toThrow(TypeError);
    expect(String(secret)).toBe('[secret]');
  });

  it('refuses a non-string', () => {
    expect(() => new Secret(42 as unknown as string)).toThrow(TypeError);
  });
});
