import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';
import { CursorPageQuery, DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from '../../../common/pagination/page-query';
import { MESSAGE_TYPES, type MessageType, type RecipientKind } from '../entities/message.entity';

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

/** The sender's view of a message: `waiting` until a recipient is on the service, then the receipts of the linked recipients. */
export const OUTBOUND_STATUSES = ['waiting', 'sent', 'delivered', 'read'] as const;
/** The recipient's own receipt of a message. */
export const INBOUND_STATUSES = ['sent', 'delivered', 'read'] as const;
export type MessageStatus = (typeof OUTBOUND_STATUSES)[number];

export class MessageSentDto {
  @ApiProperty({ example: 'msg_…' }) id: string;
  @ApiProperty({
    enum: ['sent', 'waiting'],
    description:
      '`waiting`: no recipient is on the service yet (the contact has not signed up with that verified address); it is kept for them',
  })
  status: 'sent' | 'waiting';
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

/** `GET /v1/messages?with=…&limit&cursor`. */
export class MessageHistoryQueryDto extends CursorPageQuery {
  @ApiProperty({
    description: 'A contact (`con_…`) of yours, or a group (`grp_…`) you own or are a member of (see `GET /v1/conversations`)',
    example: 'con_…',
  })
  @IsString()
  @IsNotEmpty()
  @MaxLength(64)
  with: string;
}

export const MESSAGE_DIRECTIONS = ['outbound', 'inbound'] as const;
export type MessageDirection = (typeof MESSAGE_DIRECTIONS)[number];

export class MessageItemDto {
  @ApiProperty({ example: 'msg_…' }) id: string;
  @ApiProperty({
    enum: MESSAGE_DIRECTIONS,
    description: 'outbound: you sent it; inbound: the contact’s user (or the group’s owner) sent it to you',
  })
  direction: MessageDirection;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'con_…',
    description:
      'inbound: your contact who sent it (the `with` contact; in a group thread, your contact for the group’s owner, null when you have not added them); outbound: null (you sent it)',
  })
  sender_contact_id: string | null;
  @ApiProperty({ description: 'outbound: your contact or group id; inbound: your user id' }) recipient_id: string;
  @ApiProperty({ enum: ['contact', 'group'], description: 'How the sender addressed it: to one contact, or to a group' })
  recipient_kind: RecipientKind;
  @ApiProperty({
    type: String,
    nullable: true,
    example: 'grp_…',
    description: 'The group it was sent to (its owner’s `grp_` id); null for a one-to-one message',
  })
  group_id: string | null;
  @ApiProperty({ enum: MESSAGE_TYPES }) type: MessageType;
  @ApiProperty() content: string;
  @ApiProperty({
    enum: OUTBOUND_STATUSES,
    description:
      'inbound: your own receipt (`sent`, `delivered`, `read`). outbound: `waiting` while no recipient is on the service yet; ' +
      'else the least advanced state over the recipients on the service (`read` once every one of them read it). ' +
      'Receipts exist only once the recipient has added you back',
  })
  status: MessageStatus;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'inbound: when it reached you; outbound: the latest delivery among its recipients (null when none)',
  })
  delivered_at: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'inbound: when you read it; outbound: the latest read among its recipients (null when none)',
  })
  read_at: string | null;
  @ApiProperty({
    type: 'integer',
    minimum: 0,
    description: 'outbound: recipients not on the service yet (it waits for them); inbound: 0',
  })
  waiting_recipients: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class MessageHistoryDto {
  @ApiProperty({ type: [MessageItemDto], description: 'Newest first' }) messages: MessageItemDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for older messages; null on the last page' })
  next_cursor: string | null;
}
