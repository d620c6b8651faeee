import type { SandboxStream } from '@veetbot/ports';

/**
 * stdout and stderr under one byte budget (§ Output: "a bounded reader"): chunks are kept
 * until the two together reach the limit; past it `onOverflow` fires once and nothing more
 * is kept, though bytes are still counted until the sandbox is gone.
 */
export class BoundedCapture {
  readonly #limit: number;
  readonly #onOverflow: () => void;
  #kept = 0;
  #overflowed = false;
  readonly #streams = {
    stdout: { chunks: [] as Buffer[], total: 0 },
    stderr: { chunks: [] as Buffer[], total: 0 },
  };

  constructor(limit: number, onOverflow: () => void) {
    this.#limit = limit;
    this.#onOverflow = onOverflow;
  }

  get overflowed(): boolean {
    return this.#overflowed;
  }

  add(stream: 'stdout' | 'stderr', chunk: Buffer): void {
    const state = this.#streams[stream];
    state.total += chunk.length;
    const room = this.#limit - this.#kept;
    if (room > 0) {
      const kept = chunk.length <= room ? chunk : chunk.subarray(0, room);
      state.chunks.push(kept);
      this.#kept += kept.length;
    }
    if (!this.#overflowed && this.#streams.stdout.total + this.#streams.stderr.total > this.#limit) {
      this.#overflowed = true;
      this.#onOverflow();
    }
  }

  result(stream: 'stdout' | 'stderr'): SandboxStream {
    const state = this.#streams[stream];
    const bytes = Buffer.concat(state.chunks);
    // A cut may split a UTF-8 sequence; the decoder replaces the broken tail, never throws. A NUL
    // (binary output) becomes U+FFFD: the text is stored as jsonb, which cannot hold one, and a
    // program that printed a binary file must still be a readable result (ADR 0019), not
    // tool.output_invalid.
    return { text: bytes.toString('utf8').replaceAll('\u0000', '\uFFFD'), totalBytes: state.total, truncated: bytes.length < state.total };
  }

  /** The last bytes of stderr kept, for recognising how a program died. */
  stderrTail(bytes: number): string {
    const all = Buffer.concat(this.#streams.stderr.chunks);
    return all.subarray(Math.max(0, all.length - bytes)).toString('utf8');
  }
}
