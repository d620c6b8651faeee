/**
 * Splits a byte stream into newline-terminated frames of at most `maxBytes` each. Bytes are
 * held as Buffers until a newline, so a UTF-8 sequence split across chunks decodes whole.
 */
export class FrameReader {
  readonly #maxBytes: number;
  #pending: Buffer[] = [];
  #pendingBytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  /** The complete frames in `chunk`; `tooLarge` once a frame passes the bound (read no more). */
  push(chunk: Buffer): { frames: string[]; tooLarge: boolean } {
    const frames: string[] = [];
    let start = 0;
    for (let newline = chunk.indexOf(0x0a, start); newline !== -1; newline = chunk.indexOf(0x0a, start)) {
      const piece = chunk.subarray(start, newline);
      if (this.#pendingBytes + piece.length > this.#maxBytes) return { frames, tooLarge: true };
      const frame = this.#pending.length === 0 ? piece : Buffer.concat([...this.#pending, piece]);
      this.#pending = [];
      this.#pendingBytes = 0;
      frames.push(frame.toString('utf8'));
      start = newline + 1;
    }
    const rest = chunk.subarray(start);
    if (this.#pendingBytes + rest.length > this.#maxBytes) return { frames, tooLarge: true };
    if (rest.length > 0) {
      this.#pending.push(Buffer.from(rest));
      this.#pendingBytes += rest.length;
    }
    return { frames, tooLarge: false };
  }
}
