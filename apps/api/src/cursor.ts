import type { InvocationRow, PageCursor } from '@veetbot/ports';
import { ApiError } from './api-error';

/** An opaque keyset cursor: base64url of `[created_at, id]` of a page's last row. */
export function encodeCursor(row: Pick<InvocationRow, 'createdAt' | 'id'>): string {
  return Buffer.from(JSON.stringify([row.createdAt.toISOString(), row.id]), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string | undefined): PageCursor | null {
  if (cursor === undefined) return null;
  const invalid = () => new ApiError(400, 'request.invalid', 'Invalid request at query.cursor: not a cursor this API issued.');
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (!Array.isArray(value) || value.length !== 2 || typeof value[0] !== 'string' || typeof value[1] !== 'string') throw invalid();
  const createdAt = new Date(value[0]);
  if (Number.isNaN(createdAt.getTime()) || !/^[0-9a-f-]{36}$/i.test(value[1])) throw invalid();
  return { createdAt, id: value[1] };
}

/** Fetch one more than the page so the last page says so (`next_cursor: null`). */
export function page<T extends Pick<InvocationRow, 'createdAt' | 'id'>>(
  rows: readonly T[],
  limit: number,
): { rows: T[]; next: string | null } {
  if (rows.length <= limit) return { rows: [...rows], next: null };
  const kept = rows.slice(0, limit);
  return { rows: kept, next: encodeCursor(kept[kept.length - 1]!) };
}
