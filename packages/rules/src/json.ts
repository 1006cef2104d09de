/** A plain JSON object (not null, not an array): checked before reading fields of anything a provider sent. */
export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
