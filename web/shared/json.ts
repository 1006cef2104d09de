/** A JSON object (not an array, not null): what the pages check before reading fields of data they do not trust. */
export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
