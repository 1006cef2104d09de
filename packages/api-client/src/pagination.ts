/** A page of a list endpoint with a keyset cursor: `next_cursor` is null on the last page. */
export interface CursorPage {
  next_cursor?: string | null;
}

/**
 * Every item of a cursor-paginated list, page after page, fetching the next page only when the one before is
 * used up. `fetchPage(undefined)` reads the first page; each later call gets the previous page's `next_cursor`;
 * `items` picks the page's list.
 *
 *   for await (const execution of paginate(
 *     (cursor) => ok(api.GET('/v1/providers/executions', { params: { query: { cursor } } })),
 *     (page) => page.executions,
 *   )) { … }
 */
export async function* paginate<P extends CursorPage, T>(
  fetchPage: (cursor: string | undefined) => Promise<P>,
  items: (page: P) => readonly T[] | undefined,
): AsyncGenerator<T, void, undefined> {
  let cursor: string | undefined;
  const seen = new Set<string>();
  for (;;) {
    const page = await fetchPage(cursor);
    yield* items(page) ?? [];
    const next = page.next_cursor;
    // A cursor that comes back again would loop forever: the list ends there.
    if (!next || seen.has(next)) return;
    seen.add(next);
    cursor = next;
  }
}
