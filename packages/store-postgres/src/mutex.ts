/**
 * A FIFO mutex. PGlite is one connection: two transactions interleaving on it would share one
 * transaction block, so every transaction on it runs alone.
 */
export class Mutex {
  #tail: Promise<void> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.#tail.then(fn);
    // The next waiter starts when this one settles, whether it succeeded or not.
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
