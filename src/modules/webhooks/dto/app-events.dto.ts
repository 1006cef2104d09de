import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsIn, IsISO8601, IsOptional, IsString, Matches } from 'class-validator';
import { PageCursor, PageLimit } from '../../../common/pagination/page-query';
import { WEBHOOK_EVENT_TYPES } from '../webhook-contract';

/** `type=a,b` and `type=a&type=b` both name several types; anything else stays as it is for the validators to refuse. */
const typeList = () =>
  Transform(({ value }: { value: unknown }) => {
    const parts = typeof value === 'string' ? [value] : Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : null;
    return parts ? parts.flatMap((part) => part.split(',')).map((part) => part.trim()) : value;
  });

export class AppEventListQuery {
  @ApiPropertyOptional({
    type: [String],
    enum: WEBHOOK_EVENT_TYPES,
    description: 'Only events of these types: repeat the parameter or separate types with commas',
  })
  @IsOptional()
  @typeList()
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(WEBHOOK_EVENT_TYPES.length)
  @IsIn(WEBHOOK_EVENT_TYPES, { each: true, message: `type must be among ${WEBHOOK_EVENT_TYPES.join(', ')}` })
  type?: string[];

  @ApiPropertyOptional({ format: 'date-time', description: 'Created at or after' })
  @IsOptional()
  @IsISO8601({ strict: true })
  since?: string;

  @ApiPropertyOptional({ format: 'date-time', description: 'Created before' })
  @IsOptional()
  @IsISO8601({ strict: true })
  until?: string;

  @ApiPropertyOptional({
    description: "Only this app's events (a developer token with several apps); an app token sees its own app only",
    example: 'app_0123456789ABCDEFabcdef',
  })
  @IsOptional()
  @IsString()
  @Matches(/^app_[0-9A-Za-z]{22}$/, { message: 'app_id must be an app id (app_ followed by 22 letters or digits)' })
  app_id?: string;

  @PageCursor() cursor?: string;
  @PageLimit() limit?: number;
}

/** One event: exactly the envelope the app's webhook endpoint receives for it. */
export class AppEventDto {
  @ApiProperty({ description: 'The event id (evt_), the same in every delivery of the event' }) id: string;
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES }) type: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty() app_id: string;
  @ApiProperty({ description: 'The idempotency key its deliveries carry' }) idempotency_key: string;
  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The event data (docs/events.md)' }) data: Record<
    string,
    unknown
  >;
}

export class AppEventPageDto {
  @ApiProperty({ type: [AppEventDto], description: 'Newest first' }) events: AppEventDto[];
  @ApiProperty({ nullable: true, type: String, description: 'Pass as `cursor` for the next page; null on the last page' })
  next_cursor: string | null;
}
