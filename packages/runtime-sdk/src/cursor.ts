import { RuntimeError } from './errors';

/**
 * History cursors: the runtime's own position, opaque to the service (spec,
 * rule 4) and to users, as base64url JSON. Not a secret and not signed: a
 * cursor only says where a list the caller may read continues, so decode it
 * as input (a tampered cursor is `INVALID_PARAMS`, never a crash).
 */
export function encodeCursor(position: Readonly<Record<string, unknown>>): string {
  return Buffer.from(JSON.stringify(position), 'utf8').toString('base64url');
}

/** The position a cursor holds; `undefined` for no cursor (the first page). */
export function decodeCursor<P extends Record<string, unknown> = Record<string, unknown>>(
  cursor: string | undefined | null,
): P | undefined {
  if (cursor === undefined || cursor === null || cursor === '') return undefined;
  const refuse = () => new RuntimeError('INVALID_PARAMS', 'params.cursor is not a cursor this runtime issued', { field: 'params.cursor' });
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw refuse();
  try {
    const position: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (typeof position !== 'object' || position === null || Array.isArray(position)) throw refuse();
    return position as P;
  } catch {
    throw refuse();
  }
}

/**
 * One page of an in-memory list, newest first, by offset: for runtimes whose
 * upstream has no cursor of its own. `next` is null on the last page.
 */
export function pageOf<I>(
  all: readonly I[],
  params: { limit?: number; cursor?: string },
): { items: I[]; next: string | null; totalCount: number } {
  const offset = decodeCursor<{ offset: number }>(params.cursor)?.offset ?? 0;
  if (!Number.isInteger(offset) || offset < 0) {
    throw new RuntimeError('INVALID_PARAMS', 'params.cursor is not a cursor this runtime issued', { field: 'params.cursor' });
  }
  const limit = params.limit ?? 20;
  const items = all.slice(offset, offset + limit);
  const end = offset + items.length;
  return { items, next: end < all.length ? encodeCursor({ offset: end }) : null, totalCount: all.length };
}
