import { ApiExtraModels, ApiProperty, getSchemaPath } from '@nestjs/swagger';
import { CursorPageQuery } from '../../../common/pagination/page-query';
import { MESSAGE_DIRECTIONS, type MessageDirection } from './message.dto';
import { MESSAGE_TYPES, type MessageType } from '../entities/message.entity';

/** `GET /v1/conversations?limit&cursor`. */
export class ConversationListQueryDto extends CursorPageQuery {}

export const CONVERSATION_KINDS = ['contact', 'group'] as const;
export type ConversationKind = (typeof CONVERSATION_KINDS)[number];
export const GROUP_ROLES = ['owner', 'member'] as const;
export type GroupRole = (typeof GROUP_ROLES)[number];

export class ConversationLastMessageDto {
  @ApiProperty({ example: 'msg_…' }) id: string;
  @ApiProperty() content: string;
  @ApiProperty({ enum: MESSAGE_TYPES }) type: MessageType;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ enum: MESSAGE_DIRECTIONS, description: 'outbound: you sent it; inbound: you received it' })
  direction: MessageDirection;
}

@ApiExtraModels(ConversationLastMessageDto)
export class ConversationDto {
  @ApiProperty({ enum: CONVERSATION_KINDS }) kind: ConversationKind;
  @ApiProperty({
    example: 'con_…',
    description: 'Your contact (`con_…`) or a group (`grp_…`) you own or are a member of; pass it as `with` to `GET /v1/messages`',
  })
  id: string;
  @ApiProperty({ description: 'The contact’s name as you saved it, or the group’s name as its owner named it' }) name: string;
  @ApiProperty({
    enum: GROUP_ROLES,
    nullable: true,
    type: String,
    description: 'Groups: `owner` (yours: you write to it) or `member` (someone else’s group that reaches you); null for contacts',
  })
  role: GroupRole | null;
  @ApiProperty({
    oneOf: [{ $ref: getSchemaPath(ConversationLastMessageDto) }],
    nullable: true,
    description: 'null when nothing was exchanged yet',
  })
  last_message: ConversationLastMessageDto | null;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Messages received in this conversation that you have not read' })
  unread: number;
}

export class ConversationListDto {
  @ApiProperty({
    type: [ConversationDto],
    description: 'By last message, newest first; conversations without messages last, by name',
  })
  conversations: ConversationDto[];
  @ApiProperty({ type: String, nullable: true, description: 'Pass as `cursor` for the next page; null on the last page' })
  next_cursor: string | null;
}
