import { describe, expect, it } from 'vitest';
import { Semaphore } from '../src/adapter/semaphore';

describe('Semaphore (the preparation and start-up slots)', () => {
  it('admits up to its size, then queues first come first served', async () => {
    const slots = new Semaphore(2);
    const order: string[] = [];
    const a = await slots.acquire();
    const b = await slots.acquire();
    expect(slots.available).toBe(0);
    const c = slots.acquire().then((release) => {
      order.push('c');
      return release;
    });
    const d = slots.acquire().then((release) => {
      order.push('d');
      return release;
    });
    await new Promise((r) => setTimeout(r, 10));
    expect(order).toEqual([]);
    a();
    (await c)();
    b();
    (await d)();
    expect(order).toEqual(['c', 'd']);
    expect(slots.available).toBe(2);
  });

  it('a release is idempotent', async () => {
    const slots = new Semaphore(1);
    const release = await slots.acquire();
    release();
    release();
    expect(slots.available).toBe(1);
  });
});
