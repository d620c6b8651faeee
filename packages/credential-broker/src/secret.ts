import { createHash, timingSafeEqual } from 'node:crypto';
import { SecretRedactor } from '@veetbot/domain';
import type { SecretValue } from '@veetbot/ports';

const SHOWN = '[secret]';

/**
 * RULINGS.md "Credentials": a resolved value whose string and JSON forms never show the value.
 * The value sits in an ECMAScript private field, so it is not an own property: Object.keys,
 * spread, JSON.stringify, structuredClone and util.inspect cannot see it. Every conversion a
 * logger or a template literal might use answers `[secret]`; only `reveal()` returns the value,
 * and it is called only where the specification allows (a header, a child environment, the one
 * tool that needs it). Comparing and scrubbing need no reveal: `equals` and `addTo` (ADR 0018).
 */
export class Secret implements SecretValue {
  readonly #value: string;

  constructor(value: string) {
    if (typeof value !== 'string') throw new TypeError('A Secret holds a string.');
    this.#value = value;
    Object.freeze(this);
  }

  reveal(): string {
    return this.#value;
  }

  /** Constant-time over fixed-length digests; only another Secret can be equal. */
  equals(other: SecretValue): boolean {
    if (typeof other !== 'object' || other === null || !(#value in other)) return false;
    const digest = (v: string) => createHash('sha256').update(v, 'utf8').digest();
    return timingSafeEqual(digest(this.#value), digest((other as Secret).#value));
  }

  /** Only the domain's redactor is taught the value: any other object is refused, not fed. */
  addTo(redactor: SecretRedactor): void {
    if (!(redactor instanceof SecretRedactor)) throw new TypeError('A Secret is added only to a SecretRedactor.');
    redactor.add(this.#value);
  }

  toString(): string {
    return SHOWN;
  }

  toJSON(): string {
    return SHOWN;
  }

  valueOf(): string {
    return SHOWN;
  }

  [Symbol.toPrimitive](): string {
    return SHOWN;
  }

  /** util.inspect, console.log, and every logger built on them. */
  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return SHOWN;
  }
}
