import type { ClientRequest, IncomingMessage } from 'node:http';
import { McpAdapterError, ResponseTooLargeError } from '../errors';

/**
 * The size of one message in a response body. A JSON body is one message (the whole body
 * counts, newlines or not: a pretty-printed body is no smaller); an SSE stream is many, and an
 * event ends at an empty line — a server cannot make the SDK's event parser, which joins
 * `data:` lines until that empty line, buffer without bound by splitting one event into
 * short lines. The standalone stream may live for hours: only each event is bounded.
 */
export class MessageSizeCap {
  readonly limitBytes: number;
  readonly #perEvent: boolean;
  /**
   * § Output: the call's hard capture ceiling (maximum_output_bytes × 4), counted over the whole
   * body — every event of an SSE stream, comments and notifications included — so a server
   * cannot stream past it in messages that are each under the per-message cap (docs/adr/0025).
   */
  readonly #totalLimitBytes: number;
  #total = 0;
  #bytes = 0;
  /** Bytes of the line in progress, and whether they are exactly one carriage return. */
  #lineBytes = 0;
  #lineIsCarriageReturn = false;

  constructor(limitBytes: number, perEvent: boolean, totalLimitBytes: number = Number.POSITIVE_INFINITY) {
    this.limitBytes = limitBytes;
    this.#perEvent = perEvent;
    this.#totalLimitBytes = totalLimitBytes;
  }

  /** The limit that was broken once accept said no: the call's ceiling, or the per-message cap. */
  get exceededLimitBytes(): number {
    return this.#total > this.#totalLimitBytes ? this.#totalLimitBytes : this.limitBytes;
  }

  /** Counts `chunk`; false once the message in progress, or the whole body, is over its limit. */
  accept(chunk: Uint8Array): boolean {
    this.#total += chunk.length;
    if (this.#total > this.#totalLimitBytes) return false;
    if (!this.#perEvent) {
      this.#bytes += chunk.length;
      return this.#bytes <= this.limitBytes;
    }
    let start = 0;
    for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, start)) {
      const length = this.#lineBytes + (i - start);
      const empty = length === 0 || (length === 1 && (this.#lineBytes === 1 ? this.#lineIsCarriageReturn : chunk[start] === 0x0d));
      this.#bytes += i + 1 - start;
      if (this.#bytes > this.limitBytes) return false;
      if (empty) this.#bytes = 0;
      this.#lineBytes = 0;
      this.#lineIsCarriageReturn = false;
      start = i + 1;
    }
    const rest = chunk.length - start;
    if (rest > 0) {
      this.#lineIsCarriageReturn = this.#lineBytes === 0 && rest === 1 && chunk[start] === 0x0d;
      this.#lineBytes += rest;
      this.#bytes += rest;
    }
    return this.#bytes <= this.limitBytes;
  }
}

export interface ResponseBody {
  readonly stream: ReadableStream<Uint8Array>;
  /** Ends the body as a clean end of stream and drops the connection (a cancelled request). */
  end(): void;
}

/** Bytes the web stream may hold before the socket is paused. */
const QUEUE_BYTES = 64 * 1024;

/**
 * A node:http response as the body of a fetch Response, with the socket driven by the reader:
 * `pull` resumes it, a full queue pauses it, and `cancel` (the SDK discarding a body it does
 * not want: a 404 on the optional GET stream, a notification answered with 200 and a body)
 * detaches every listener and drops the connection, so nothing is ever enqueued after the
 * reader has gone. `Readable.toWeb` is not used: on Node 20 it keeps enqueuing what the socket
 * delivers after a cancel, and throws ERR_INVALID_STATE from an event handler — an uncaught
 * exception, caused by a remote server, that ends the worker process.
 *
 * Every way the body can end settles the stream once: complete (close), a connection lost
 * mid-body (error: the SDK sees a broken stream instead of waiting forever for the rest), a
 * message over the cap (error: ResponseTooLargeError, and the connection is dropped), the
 * reader's cancel, or `end()`. An 'error' listener stays on the response for its whole life: a
 * late failure of a body nobody reads goes nowhere rather than to the process.
 */
export function responseBody(
  response: IncomingMessage,
  request: ClientRequest,
  cap: MessageSizeCap,
  onOversize?: (error: ResponseTooLargeError) => void,
): ResponseBody {
  let controller: ReadableStreamDefaultController<Uint8Array> | undefined;
  let settled = false;

  const detach = (): void => {
    response.off('data', onData);
    response.off('end', onEnd);
    response.off('close', onClose);
  };
  /** The rest of the body is unwanted: a connection cannot be reused mid-body, so it goes. */
  const discard = (): void => {
    if (!response.complete) request.destroy();
    else response.resume();
  };
  const settle = (how: 'close' | Error): void => {
    if (settled) return;
    settled = true;
    detach();
    try {
      if (how === 'close') controller?.close();
      else controller?.error(how);
    } catch {
      // Already closed by the reader: nothing is waiting for this body.
    }
  };
  const broken = (cause?: unknown): void => {
    settle(
      new McpAdapterError('mcp.transport.failed', 'The connection closed before the response was complete.', { retryable: true, cause }),
    );
  };
  function onData(chunk: Buffer): void {
    if (settled || controller === undefined) return;
    if (!cap.accept(chunk)) {
      const error = new ResponseTooLargeError(cap.exceededLimitBytes);
      settle(error);
      discard();
      onOversize?.(error);
      return;
    }
    try {
      controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    } catch {
      // The reader went away between two events: treat it as its cancel.
      settled = true;
      detach();
      discard();
      return;
    }
    if ((controller.desiredSize ?? 0) <= 0) response.pause();
  }
  function onEnd(): void {
    settle('close');
  }
  function onClose(): void {
    if (!response.complete) broken();
  }

  // Flowing at once, as far as the queue allows (a body nobody reads still ends and frees its
  // request); a full queue pauses the socket until the reader pulls.
  response.on('error', (error) => broken(error));
  response.on('data', onData);
  response.once('end', onEnd);
  response.once('close', onClose);

  const stream = new ReadableStream<Uint8Array>(
    {
      start(c) {
        controller = c;
      },
      pull() {
        if (!settled) response.resume();
      },
      cancel() {
        if (settled) return;
        settled = true;
        detach();
        discard();
      },
    },
    new ByteLengthQueuingStrategy({ highWaterMark: QUEUE_BYTES }) as QueuingStrategy<Uint8Array>,
  );
  return {
    stream,
    end: () => {
      // Already complete: 'end' closes the body, and the socket may be back in the pool.
      if (settled || response.complete) return;
      settle('close');
      request.destroy();
    },
  };
}
