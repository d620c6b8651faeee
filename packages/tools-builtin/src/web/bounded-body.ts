import type { IncomingMessage } from 'node:http';
import type { Transform } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';

export type BodyRead =
  | { readonly ok: true; readonly bytes: Buffer }
  | { readonly ok: false; readonly reason: 'too_large' | 'bad_encoding' | 'aborted' };

/**
 * Read a response body, decoding its Content-Encoding, and stop at `maxDecodedBytes` of DECODED
 * bytes (a gzip bomb is bounded by what it expands to, not by what it sent) and `maxWireBytes`
 * on the wire. Over either: the connection is destroyed and nothing more is read. The time cap is
 * the caller's signal, which destroys the request (and so this stream).
 */
export function readBoundedBody(
  response: IncomingMessage,
  limits: { readonly maxDecodedBytes: number; readonly maxWireBytes: number },
  signal: AbortSignal,
): Promise<BodyRead> {
  const encoding = (headerValue(response.headers['content-encoding']) ?? 'identity').trim().toLowerCase();
  let decoder: Transform | null;
  switch (encoding) {
    case '':
    case 'identity':
      decoder = null;
      break;
    case 'gzip':
    case 'x-gzip':
      decoder = createGunzip();
      break;
    case 'deflate':
      decoder = createInflate();
      break;
    case 'br':
      decoder = createBrotliDecompress();
      break;
    default:
      // Stacked or unknown encodings: refused rather than read as bytes the page did not mean.
      response.destroy();
      return Promise.resolve({ ok: false, reason: 'bad_encoding' });
  }
  return new Promise<BodyRead>((resolve) => {
    const chunks: Buffer[] = [];
    let decoded = 0;
    let wire = 0;
    let settled = false;
    const finish = (result: BodyRead) => {
      if (settled) return;
      settled = true;
      signal.removeEventListener('abort', onAbort);
      if (!result.ok) {
        response.destroy();
        decoder?.destroy();
      }
      resolve(result);
    };
    const onAbort = () => finish({ ok: false, reason: 'aborted' });
    if (signal.aborted) return finish({ ok: false, reason: 'aborted' });
    signal.addEventListener('abort', onAbort, { once: true });

    const out = decoder ?? response;
    out.on('data', (chunk: Buffer) => {
      if (settled) return;
      decoded += chunk.length;
      if (decoded > limits.maxDecodedBytes) return finish({ ok: false, reason: 'too_large' });
      chunks.push(chunk);
    });
    out.on('end', () => finish({ ok: true, bytes: Buffer.concat(chunks) }));
    out.on('error', () => finish({ ok: false, reason: decoder !== null && out === decoder ? 'bad_encoding' : 'aborted' }));
    if (decoder !== null) {
      response.on('data', (chunk: Buffer) => {
        wire += chunk.length;
        if (wire > limits.maxWireBytes) return finish({ ok: false, reason: 'too_large' });
        // Backpressure: the decoder's output is counted as it comes; pause the socket meanwhile.
        if (!decoder.write(chunk)) {
          response.pause();
          decoder.once('drain', () => response.resume());
        }
      });
      response.on('end', () => decoder.end());
      response.on('error', () => finish({ ok: false, reason: 'aborted' }));
    } else {
      response.on('aborted', () => finish({ ok: false, reason: 'aborted' }));
    }
  });
}

export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}
