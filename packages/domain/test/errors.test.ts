import { describe, expect, it } from 'vitest';
import {
  CanonicalizationError,
  ConfigurationError,
  RegistrationError,
  SchemaAdmissionError,
  ToolNotFoundError,
  VeetbotError,
} from '../src/index';
import { UnknownReasonCodeError } from '../src/outcome';

// STYLE.md: a Symbol.for brand lets isInstance survive two copies of this package.

const BRAND: unique symbol = Symbol.for('veetbot.error');

/** What a second copy of @veetbot/domain would produce: a different class, the same registered brand. */
class SecondCopyVeetbotError extends Error {
  readonly [BRAND] = true;
  readonly code = 'x.y';
  readonly retryable = false;
}

describe('VeetbotError.isInstance', () => {
  it('recognizes an error from a second copy of the package', () => {
    const foreign = new SecondCopyVeetbotError('from elsewhere');
    expect(foreign).not.toBeInstanceOf(VeetbotError);
    expect(VeetbotError.isInstance(foreign)).toBe(true);
    expect(VeetbotError.isInstance({ [Symbol.for('veetbot.error')]: true })).toBe(true);
  });

  it('is false for plain errors and non-errors', () => {
    expect(VeetbotError.isInstance(new Error('plain'))).toBe(false);
    expect(VeetbotError.isInstance(new RangeError('range'))).toBe(false);
    expect(VeetbotError.isInstance(null)).toBe(false);
    expect(VeetbotError.isInstance(undefined)).toBe(false);
    expect(VeetbotError.isInstance('veetbot.error')).toBe(false);
    expect(VeetbotError.isInstance({ code: 'x.y', retryable: false })).toBe(false);
    // An unregistered symbol with the same description is not the brand.
    expect(VeetbotError.isInstance({ [Symbol('veetbot.error')]: true })).toBe(false);
    expect(VeetbotError.isInstance({ [Symbol.for('veetbot.error')]: 'yes' })).toBe(false);
  });

  it('is true for every typed error of this package', () => {
    const errors = [
      new VeetbotError('x.y', 'm'),
      new CanonicalizationError('canonical.too_deep', 'm', '/a'),
      new ToolNotFoundError('a.b'),
      new RegistrationError('registry.name_invalid', 'a.b', 'm'),
      new SchemaAdmissionError('schema.remote_ref', 'm'),
      new ConfigurationError('config.invalid', 'm'),
      new UnknownReasonCodeError('x.y'),
    ];
    for (const error of errors) {
      expect(VeetbotError.isInstance(error)).toBe(true);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe(error.constructor.name);
    }
  });
});

describe('VeetbotError', () => {
  it('carries a stable code, retryable (default false) and an optional cause', () => {
    const cause = new Error('root');
    const error = new VeetbotError('tool.timeout', 'late', { retryable: true, cause });
    expect(error.code).toBe('tool.timeout');
    expect(error.retryable).toBe(true);
    expect(error.cause).toBe(cause);
    expect(error.message).toBe('late');
    const plain = new VeetbotError('x.y', 'm');
    expect(plain.retryable).toBe(false);
    expect('cause' in plain).toBe(false);
  });

  it('subclasses keep their own fields', () => {
    expect(new ToolNotFoundError('a.b')).toMatchObject({ code: 'registry.tool_not_found', toolName: 'a.b', name: 'ToolNotFoundError' });
    expect(new RegistrationError('registry.reserved_domain', 'mcp.x', 'm')).toMatchObject({
      code: 'registry.reserved_domain',
      toolName: 'mcp.x',
    });
    expect(new CanonicalizationError('canonical.negative_zero', 'm', '/a/0')).toMatchObject({
      path: '/a/0',
      name: 'CanonicalizationError',
    });
    expect(new UnknownReasonCodeError('x.y').code).toBe('domain.reason_code_unknown');
  });
});
