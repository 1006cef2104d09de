import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { QueryInt } from './query-params';

export const DEFAULT_PAGE_LIMIT = 20;
export const MAX_PAGE_LIMIT = 100;
/** PostgreSQL's OFFSET is a bigint; far beyond any real list, an int4 bound keeps the value sane. */
export const MAX_PAGE_OFFSET = 2_147_483_647;

/** `?limit&offset` of the contact and group lists. */
export class PageQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: MAX_PAGE_LIMIT, default: DEFAULT_PAGE_LIMIT })
  @IsOptional()
  @QueryInt()
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_LIMIT)
  limit?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: MAX_PAGE_OFFSET, default: 0 })
  @IsOptional()
  @QueryInt()
  @IsInt()
  @Min(0)
  @Max(MAX_PAGE_OFFSET)
  offset?: number;
}

export interface Page {
  limit: number;
  offset: number;
}

export function pageOf(query: PageQueryDto): Page {
  return { limit: query.limit ?? DEFAULT_PAGE_LIMIT, offset: query.offset ?? 0 };
}
