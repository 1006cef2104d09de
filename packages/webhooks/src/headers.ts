/** A WHATWG `Headers` (fetch, Next.js route handlers, undici) or anything with a case-insensitive `get`. */
export interface HeadersLike {
  get(name: string): string | null;
}

/** Node's `req.headers` shape, with names in any case. */
export type PlainHeaders = Record<string, string | string[] | number | undefined | null>;

export type WebhookHeaders = PlainHeaders | HeadersLike;

/** Reads header values by lower-case name from either shape; a repeated header gives several values. */
export type HeaderReader = (name: string) => string[];

function isHeadersLike(headers: WebhookHeaders): headers is HeadersLike {
  return typeof (headers as HeadersLike).get === 'function';
}

/**
 * One reader for both shapes. Plain objects are scanned case-insensitively
 * because frameworks differ (`req.headers` is lower case, hand-built objects
 * and proxies often are not).
 */
export function headerReader(headers: WebhookHeaders): HeaderReader {
  if (isHeadersLike(headers)) {
    return (name) => {
      const value = headers.get(name);
      return value === null || value === undefined || value === '' ? [] : [value];
    };
  }
  const byName = new Map<string, string[]>();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || value === null) continue;
    const values = (Array.isArray(value) ? value : [String(value)]).filter((v) => v !== '');
    const key = name.toLowerCase();
    byName.set(key, [...(byName.get(key) ?? []), ...values]);
  }
  return (name) => byName.get(name) ?? [];
}
