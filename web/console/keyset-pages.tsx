import { useState } from 'preact/hooks';
import { Button, useAction, useResource } from '../shared/ui';
import { ProblemNotice } from './problem';

/** One page of a keyset-paged list: its items and the cursor of the next page (null on the last). */
export interface KeysetPage<T> {
  items: T[];
  next: string | null;
}

/**
 * A newest-first list read a page at a time (delivery logs, events,
 * executions): `first` is the first page as a resource (read again when
 * `deps` change, which drops the older pages loaded meanwhile), `more` the
 * older pages loaded with `loadOlder`, and `cursor` whether there are more.
 */
export function useKeysetPages<T>(page: (cursor: string | null) => Promise<KeysetPage<T>>, deps: unknown[]) {
  const [more, setMore] = useState<T[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const first = useResource(async () => {
    const loaded = await page(null);
    setMore([]);
    setCursor(loaded.next);
    return loaded.items;
  }, deps);
  const loadOlder = useAction(async () => {
    const loaded = await page(cursor);
    setMore((current) => [...current, ...loaded.items]);
    setCursor(loaded.next);
  });
  return { first, more, cursor, loadOlder };
}

/** "Load older …" under such a list while there is more, with the last attempt's failure. */
export function LoadOlder(props: { pages: Pick<ReturnType<typeof useKeysetPages>, 'cursor' | 'loadOlder'>; what: string }) {
  const { cursor, loadOlder } = props.pages;
  return (
    <>
      {cursor && (
        <Button onClick={() => void loadOlder.run()} busy={loadOlder.busy}>
          Load older {props.what}
        </Button>
      )}
      <ProblemNotice error={loadOlder.failure} />
    </>
  );
}
