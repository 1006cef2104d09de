import { applyDecorators } from '@nestjs/common';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';

export const DEFAULT_PAGE_LIMIT = 20;
export const MAX_PAGE_LIMIT = 100;
/** PostgreSQL's OFFSET is a bigint; far beyond any real list, an int4 bound keeps the value sane. */
export const MAX_PAGE_OFFSET = 2_147_483_647;
/** Cursors are opaque strings the service issued; none is longer. */
export const MAX_CURSOR_LENGTH = 200;

/**
 * Query strings arrive as text. Only a plain decimal integer becomes a number;
 * anything else (`1.5`, `1e2`, `abc`, an empty value, a repeated parameter) stays as it is so
 * that `@IsInt()` refuses it with a message naming the parameter.
 */
export const QueryInt = () =>
  Transform(({ value }: { value: unknown }) => (typeof value === 'string' && /^-?\d+$/.test(value) ? Number(value) : value));

/**
 * `?limit` of any list: an integer in [1, max] (default `default`). Out of range is 400, never clamped.
 * Every numeric query parameter of the service is one of these three decorators, so none reaches SQL unbounded.
 */
export const PageLimit = (options: { max?: number; default?: number } = {}) => {
  const max = options.max ?? MAX_PAGE_LIMIT;
  return applyDecorators(
    ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: max, default: options.default ?? DEFAULT_PAGE_LIMIT }),
    IsOptional(),
    QueryInt(),
    IsInt(),
    Min(1),
    Max(max),
  );
};

/** `?offset` of an offset-paged list: an integer in [0, MAX_PAGE_OFFSET], default 0. */
export const PageOffset = () =>
  applyDecorators(
    ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: MAX_PAGE_OFFSET, default: 0 }),
    IsOptional(),
    QueryInt(),
    IsInt(),
    Min(0),
    Max(MAX_PAGE_OFFSET),
  );

/** `?cursor` of a cursor-paged list: the `next_cursor` of the previous page. */
export const PageCursor = () =>
  applyDecorators(
    ApiPropertyOptional({ description: '`next_cursor` of the previous page', maxLength: MAX_CURSOR_LENGTH }),
    IsOptional(),
    IsString(),
    MaxLength(MAX_CURSOR_LENGTH),
  );

/** `?limit&offset` with the standard bounds (1–100, default 20; offset ≥ 0). */
export class OffsetPageQuery {
  @PageLimit() limit?: number;
  @PageOffset() offset?: number;
}

/** `?limit&cursor` with the standard bounds (1–100, default 20). */
export class CursorPageQuery {
  @PageLimit() limit?: number;
  @PageCursor() cursor?: string;
}

export interface Page {
  limit: number;
  offset: number;
}

export function pageOf(query: OffsetPageQuery): Page {
  return { limit: query.limit ?? DEFAULT_PAGE_LIMIT, offset: query.offset ?? 0 };
}
