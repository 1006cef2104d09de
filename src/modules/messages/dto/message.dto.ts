import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import { CursorPageQuery, DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../../../common/pagination/page-query';
import { MESSAGE_TYPES, type MessageType } from '../entities/message.entity';

export const MAX_CONTENT_LENGTH = 4000;
export const DEFAULT_HISTORY_LIMIT = DEFAULT_PAGE_LIMIT;
export const MAX_HISTORY_LIMIT = MAX_PAGE_LIMIT;

/** `POST /v1/messages`. */
export class SendMessageDto {
  @ApiProperty({ description: 'One of your contacts (`con_…`) or groups (`grp_…`); any other id answers 404', example: 'con_…' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  recipient_id: string;

  @ApiProperty({ minLength: 1, maxLength: MAX_CONTENT_LENGTH, description: 'Not only whitespace; sent as written' })
  @IsString()
  @Length(1, MAX_CONTENT_LENGTH)
  @Matches(/\S/, { message: 'content must not be only whitespace' })
  content: string;

  @ApiPropertyOptional({ enum: MESSAGE_TYPES, default: 'text' })
  @IsOptional()
  @IsIn(MESSAGE_TYPES, { message: `type must be one of: ${MESSAGE_TYPES.join(', ')}` })
  type?: MessageType;
}

export class MessageSentDto {
  @ApiProperty({ example: 'msg_…' }) id: string;
  @ApiProperty({ example: 'sent' }) status: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

/** `GET /v1/messages?with=…&limit&cursor`. */
export class MessageHistoryQueryDto extends CursorPageQuery {
  @ApiProperty({ description: 'A contact (`con_…`) or group (`grp_…`) of yours', example: 'con_…' })
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  with: string;
}

export const MESSAGE_DIRECTIONS = ['outbound', 'inbound'] as const;
export type MessageDirection = (typeof MESSAGE_DIRECTIONS)[number];

export class MessageItemDto {
  @ApiProperty({ example: 'msg_…' }) id: string;
  @ApiProperty({ enum: MESSAGE_DIRECTIONS, description: 'outbound: you sent it; inbound: the contact’s user sent it to you' })
  direction: MessageDirection;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'con_…',
    description: 'inbound: your contact who sent it (the `with` contact); outbound: null (you sent it)',
  })
  sender_contact_id: string | null;
  @ApiProperty({ description: 'outbound: your contact or group id; inbound: your user id' }) recipient_id: string;
  @ApiProperty({ enum: MESSAGE_TYPES }) type: MessageType;
  @ApiProperty() content: string;
  @ApiProperty({ example: 'sent' }) status: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class MessageHistoryDto {
  @ApiProperty({ type: [MessageItemDto], description: 'Newest first' }) messages: MessageItemDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for older messages; null on the last page' })
  next_cursor: string | null;
}
