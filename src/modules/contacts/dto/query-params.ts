import { Transform } from 'class-transformer';

/**
 * Query strings arrive as text. Only a plain decimal integer becomes a number;
 * anything else (`1.5`, `1e2`, `abc`, a repeated parameter) stays as it is so
 * that `@IsInt()` refuses it with a message naming the parameter.
 */
export const QueryInt = () =>
  Transform(({ value }: { value: unknown }) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value));

/** Trims surrounding whitespace of string input, leaves anything else for the validators. */
export const Trimmed = () => Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value));
