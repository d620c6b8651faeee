import { describe, expect, it } from 'vitest';
import { IdempotencyClass, decideRecovery } from '../src/index';
import type { RecoveryDecision } from '../src/recovery-table';

// § The effect watermark: recovery reads a fact rather than making an inference.

const SET = [new Date('2024-01-01T00:00:00Z'), '2024-01-01T00:00:00Z'] as const;
const NULL = [null, undefined] as const;

const TABLE: ReadonlyArray<readonly [IdempotencyClass, 'null' | 'set', RecoveryDecision]> = [
  ['read_only', 'null', 're_execute'],
  ['read_only', 'set', 're_execute'],
  ['idempotent', 'null', 're_execute'],
  ['idempotent', 'set', 're_execute'],
  ['conditionally_idempotent', 'null', 're_execute'],
  ['conditionally_idempotent', 'set', 'replay'],
  ['non_idempotent', 'null', 're_execute'],
  ['non_idempotent', 'set', 'uncertain'],
];

describe('decideRecovery', () => {
  it('the table covers every class in both watermark states', () => {
    expect(TABLE).toHaveLength(IdempotencyClass.options.length * 2);
    for (const cls of IdempotencyClass.options) {
      expect(
        TABLE.filter(([c]) => c === cls)
          .map(([, w]) => w)
          .sort(),
      ).toEqual(['null', 'set']);
    }
  });

  it.each(TABLE)('%s with effect_sent_at %s -> %s', (cls, watermark, decision) => {
    for (const value of watermark === 'set' ? SET : NULL) {
      expect(decideRecovery(cls, value)).toBe(decision);
    }
  });
});
