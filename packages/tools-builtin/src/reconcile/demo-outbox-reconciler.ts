import { fstatSync, openSync, closeSync, readSync } from 'node:fs';
import path from 'node:path';
import type { ReconcileAnswer, ReconcileQuery, Reconciler } from '@veetbot/ports';

/** What one look at the outbox saw: its bytes, and its size by fstat before and after the read. */
export interface OutboxSnapshot {
  readonly bytes: Uint8Array;
  readonly sizeBefore: number;
  readonly sizeAfter: number;
}

/** Reads the outbox; null when it does not exist. A test substitutes one that lies or fails. */
export type OutboxReader = () => Promise<OutboxSnapshot | null>;

const KEY = /^[0-9a-f]{64}$/;

/** The real reader: one descriptor, fstat, read to the end, fstat again. */
export function fileOutboxReader(outboxPath: string): OutboxReader {
  const absolute = path.resolve(outboxPath);
  return async () => {
    let fd: number;
    try {
      fd = openSync(absolute, 'r');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    try {
      const sizeBefore = fstatSync(fd).size;
      const chunks: Buffer[] = [];
      let total = 0;
      for (;;) {
        const chunk = Buffer.alloc(64 * 1024);
        const n = readSync(fd, chunk, 0, chunk.length, total);
        if (n === 0) break;
        chunks.push(chunk.subarray(0, n));
        total += n;
      }
      return { bytes: Buffer.concat(chunks, total), sizeBefore, sizeAfter: fstatSync(fd).size };
    } finally {
      closeSync(fd);
    }
  };
}

const short = (key: string) => `${key.slice(0, 12)}…`;

/** Why a snapshot cannot be trusted on its own, or null when it is self-consistent. */
function inconsistency(snapshot: OutboxSnapshot): string | null {
  const { bytes, sizeBefore, sizeAfter } = snapshot;
  if (bytes.length !== sizeBefore || sizeAfter < sizeBefore) {
    return `${bytes.length} bytes read where fstat said ${sizeBefore} before and ${sizeAfter} after`;
  }
  return null;
}

const startsWith = (whole: Uint8Array, prefix: Uint8Array): boolean =>
  whole.length >= prefix.length && Buffer.compare(Buffer.from(whole.buffer, whole.byteOffset, prefix.length), Buffer.from(prefix)) === 0;

/**
 * demo.external_write's reconciler (docs/adr/0063): the outbox is append-only and every record
 * is `<idempotency key>\t<line>\n`, so the key is an exact lookup. It never answers from one
 * look. The outbox is read twice, and a definite answer needs both reads to cross-check: each
 * read's bytes exactly the size fstat reported before it (a short or padded read is not a
 * complete look) with the file only growing meanwhile, the first read a prefix of the second
 * (append-only: a byte that differs, or a second read that is shorter, means one of them is
 * wrong), and every record well formed. Then, on the second read:
 *   one record with the key and the call's line → applied;
 *   no record with the key → not_applied;
 *   anything else (the key with another line, twice) → unknown.
 * A missing outbox is unknown: absence of the whole system of record is not evidence.
 */
export function createDemoOutboxReconciler(options: { readonly outboxPath?: string; readonly reader?: OutboxReader }): Reconciler {
  const reader = options.reader ?? fileOutboxReader(options.outboxPath ?? '');
  return {
    name: 'demo.external_write',
    async reconcile(query: ReconcileQuery): Promise<ReconcileAnswer> {
      const line = query.arguments.line;
      if (typeof line !== 'string' || !KEY.test(query.idempotencyKey)) {
        return { outcome: 'unknown', evidence: 'The row does not carry a line and a key the outbox could hold.' };
      }
      const first = await reader();
      const second = await reader();
      if (first === null || second === null) return { outcome: 'unknown', evidence: 'The outbox does not exist; nothing to look in.' };
      const broken = inconsistency(first) ?? inconsistency(second);
      if (broken !== null) return { outcome: 'unknown', evidence: `The outbox read did not cross-check: ${broken}.` };
      if (!startsWith(second.bytes, first.bytes)) {
        return { outcome: 'unknown', evidence: 'Two reads of the outbox disagree (the first is not a prefix of the second).' };
      }
      const bytes = second.bytes;
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      } catch {
        return { outcome: 'unknown', evidence: 'The outbox read is not valid UTF-8.' };
      }
      if (text.length > 0 && !text.endsWith('\n')) {
        return { outcome: 'unknown', evidence: 'The outbox ends inside a record (a partial write or read).' };
      }
      const records = text.length === 0 ? [] : text.slice(0, -1).split('\n');
      const matches: string[] = [];
      for (const record of records) {
        const tab = record.indexOf('\t');
        const key = tab < 0 ? '' : record.slice(0, tab);
        if (!KEY.test(key)) return { outcome: 'unknown', evidence: 'The outbox holds a malformed record; the read proves nothing.' };
        if (key === query.idempotencyKey) matches.push(record.slice(tab + 1));
      }
      const scanned = `${records.length} records (${bytes.length} bytes, read twice) of the outbox`;
      if (matches.length === 0) {
        return { outcome: 'not_applied', evidence: `Scanned ${scanned}: none carries key ${short(query.idempotencyKey)}.` };
      }
      if (matches.length === 1 && matches[0] === line) {
        return { outcome: 'applied', evidence: `Scanned ${scanned}: one carries key ${short(query.idempotencyKey)} with the call's line.` };
      }
      return {
        outcome: 'unknown',
        evidence: `Scanned ${scanned}: ${matches.length} carry key ${short(query.idempotencyKey)} but do not match the call's line once.`,
      };
    },
  };
}
