import { Transform } from 'class-transformer';

export { QueryInt } from '../../../common/pagination/page-query';

/** Trims surrounding whitespace of string input, leaves anything else for the validators. */
export const Trimmed = () => Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value));
