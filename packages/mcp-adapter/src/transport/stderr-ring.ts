/**
 * The last `capacity` bytes a child wrote to stderr. A server's stderr is captured for the
 * operator, never passed through to the worker's own stderr, and never grows past its cap.
 */
export class StderrRing {
  readonly #buffer: Buffer;
  #length = 0;
  #start = 0;
  #total = 0;

  constructor(readonly capacity: number) {
    this.#buffer = Buffer.alloc(Math.max(0, capacity));
  }

  append(chunk: Buffer): void {
    this.#total += chunk.length;
    const cap = this.#buffer.length;
    if (cap === 0) return;
    const data = chunk.length > cap ? chunk.subarray(chunk.length - cap) : chunk;
    for (let written = 0; written < data.length; ) {
      const end = (this.#start + this.#length) % cap;
      const room = Math.min(data.length - written, cap - end);
      data.copy(this.#buffer, end, written, written + room);
      written += room;
      const overflow = Math.max(0, this.#length + room - cap);
      this.#length = Math.min(cap, this.#length + room);
      this.#start = (this.#start + overflow) % cap;
    }
  }

  /** Bytes held now (at most the capacity). */
  get size(): number {
    return this.#length;
  }

  /** Every byte ever written, kept or not. */
  get totalBytes(): number {
    return this.#total;
  }

  bytes(): Buffer {
    const cap = this.#buffer.length;
    if (this.#start + this.#length <= cap) return Buffer.from(this.#buffer.subarray(this.#start, this.#start + this.#length));
    return Buffer.concat([this.#buffer.subarray(this.#start), this.#buffer.subarray(0, (this.#start + this.#length) % cap)]);
  }

  text(): string {
    return this.bytes().toString('utf8');
  }
}
