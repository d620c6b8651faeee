/** A counting semaphore, first come first served (ADR-0131's preparation and start-up slots). */
export class Semaphore {
  #available: number;
  readonly #waiting: (() => void)[] = [];

  constructor(readonly size: number) {
    this.#available = Math.max(1, size);
  }

  async acquire(): Promise<() => void> {
    if (this.#available > 0) this.#available--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.#waiting.shift();
      if (next !== undefined) next();
      else this.#available++;
    };
  }

  /** Slots free right now (for tests). */
  get available(): number {
    return this.#available;
  }
}
