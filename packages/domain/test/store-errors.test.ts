import { describe, expect, it } from 'vitest';
import { FencingError, InvalidTransitionError, StoreError, VeetbotError } from '../src/index';

describe('store errors', () => {
  it('carry a stable code and retryable flag per code', () => {
    expect(new StoreError('store.serialization', 'x').retryable).toBe(true);
    expect(new StoreError('store.connection', 'x').retryable).toBe(true);
    expect(new StoreError('store.cancelled', 'x').retryable).toBe(false);
    const fenced = new FencingError('run-1');
    expect(fenced.code).toBe('store.fenced');
    expect(fenced.retryable).toBe(false);
    expect(fenced.runId).toBe('run-1');
    expect(fenced).toBeInstanceOf(StoreError);
    expect(fenced).toBeInstanceOf(VeetbotError);
  });

  it('are recognised by code, so a second copy of the package still matches', () => {
    const foreign = { [Symbol.for('veetbot.error')]: true, code: 'store.fenced', retryable: false };
    expect(FencingError.isInstance(foreign)).toBe(true);
    expect(StoreError.isInstance(foreign)).toBe(true);
    expect(InvalidTransitionError.isInstance(foreign)).toBe(false);
    expect(StoreError.isInstance({ [Symbol.for('veetbot.error')]: true })).toBe(false);
    expect(StoreError.isInstance(new VeetbotError('registry.x', 'y'))).toBe(false);
    const invalid = new InvalidTransitionError('claim', 'succeeded');
    expect(invalid.currentStatus).toBe('succeeded');
    expect(InvalidTransitionError.isInstance(invalid)).toBe(true);
    expect(FencingError.isInstance(invalid)).toBe(false);
  });
});
