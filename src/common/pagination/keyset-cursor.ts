import { ProblemError } from '../errors/problem-error';

/**
 * The position after the last row of a page ordered by `(created_at DESC, id DESC)`.
 * `at` is the row's `created_at` to the microsecond, as PostgreSQL stores it
 * (repositories select it with `KEYSET_AT_SQL`): a millisecond `Date` would put
 * the next page after rows that share its millisecond, and skip them.
 */
export interface KeysetPosition {
  at: string;
  id: string;
}

/** Selects a timestamp column as text with its microseconds, for `KeysetPosition.at`. */
export const KEYSET_AT_SQL = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`;

export function encodeKeyset(position: KeysetPosition): string {
  return Buffer.from(JSON.stringify([position.at, position.id])).toString('base64url');
}

/** The position a cursor names; `invalid_format` (400) for a cursor this service did not issue. */
export function decodeKeyset(cursor: string): KeysetPosition {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (
      typeof at !== 'string' ||
      typeof id !== 'string' ||
      !/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(at) ||
      Number.isNaN(Date.parse(at))
    ) {
      throw new Error('bad cursor');
    }
    return { at, id };
  } catch {
    throw new ProblemError('invalid_format', 'cursor is not one this service issued', { field: 'cursor' });
  }
}

/**
 * A page from rows read with one more than `limit` (the extra row says there is
 * another page): the first `limit` rows and the cursor after the last of them,
 * or null on the last page.
 */
export function keysetPage<Row extends { cursor_at: string; id: string }>(
  rows: Row[],
  limit: number,
): { page: Row[]; nextCursor: string | null } {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { page, nextCursor: rows.length > limit && last ? encodeKeyset({ at: last.cursor_at, id: last.id }) : null };
}
