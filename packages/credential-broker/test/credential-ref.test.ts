import { describe, expect, it } from 'vitest';
import { isCredentialRef, parseCredentialRef } from '../src/credential-ref';

describe('isCredentialRef', () => {
  it('accepts env:NAME and file:/absolute/path', () => {
    for (const ref of ['env:API_TOKEN', 'env:_X', 'env:A1_B2', 'file:/run/secrets/token', 'file:/a']) {
      expect(isCredentialRef(ref)).toBe(true);
    }
    expect(parseCredentialRef('env:API_TOKEN')).toEqual({ kind: 'env', name: 'API_TOKEN' });
    expect(parseCredentialRef('file:/run/secrets/token')).toEqual({ kind: 'file', path: '/run/secrets/token' });
  });

  it('refuses everything else by syntax alone', () => {
    for (const ref of [
      'env:',
      'env:api_token',
      'env:1TOKEN',
      'env:A-B',
      'env:A B',
      'ENV:TOKEN',
      'file:',
      'file:relative/path',
      'file:./token',
      'file:/run/../etc/shadow',
      'file:/run/secrets/..',
      'file:/run/\0x',
      'vault:secret/data/x',
      'sk-live-123',
      '',
      42,
      null,
      undefined,
    ]) {
      expect(isCredentialRef(ref), String(ref)).toBe(false);
    }
  });

  it('never dereferences: a reference to a variable that does not exist is still well-formed', () => {
    expect(isCredentialRef('env:VEETBOT_SURELY_UNSET_VARIABLE_XYZ')).toBe(true);
    expect(isCredentialRef('file:/surely/not/a/file')).toBe(true);
  });
});
