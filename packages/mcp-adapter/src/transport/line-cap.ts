import { Transform, type TransformCallback } from 'node:stream';
import { LineTooLongError } from '../errors';

/**
 * A pass-through that fails once more than `maxLineBytes` arrive without a newline: a peer that
 * never sends one cannot make a line reader (an SSE parser, a JSON body reader) buffer without
 * bound. A JSON response body is one line, so this caps it too.
 */
export class LineCapTransform extends Transform {
  #pending = 0;
  constructor(private readonly maxLineBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    let start = 0;
    for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, start)) {
      if (this.#pending + (i - start) > this.maxLineBytes) return callback(new LineTooLongError(this.maxLineBytes));
      this.#pending = 0;
      start = i + 1;
    }
    this.#pending += chunk.length - start;
    if (this.#pending > this.maxLineBytes) return callback(new LineTooLongError(this.maxLineBytes));
    callback(null, chunk);
  }
}
