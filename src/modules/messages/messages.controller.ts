import { Body, Controller, Get, Headers, HttpCode, Post, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AuthenticatedUser, CurrentUser } from '../access/authenticated-user';
import { UserApi } from '../access/user-auth.guard';
import { MessageHistoryDto, MessageHistoryQueryDto, MessageSentDto, SendMessageDto } from './dto/message.dto';
import { MessagesService } from './messages.service';
import { UserApiErrors } from '../../common/openapi/error-responses';

@ApiTags('messages')
@UserApi()
@Controller('v1/messages')
export class MessagesController {
  constructor(private readonly messages: MessagesService) {}

  @Post()
  @HttpCode(201)
  @ApiOperation({ summary: 'Send a message to one of your contacts or groups (a group reaches every member)' })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: 'Repeating a request with the same key answers the first response (marked `Idempotent-Replayed: true`) for 24 hours',
  })
  @ApiCreatedResponse({ type: MessageSentDto })
  @UserApiErrors(404)
  async send(
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: SendMessageDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<MessageSentDto> {
    const outcome = await this.messages.send(user.id, body, idempotencyKey);
    void reply.status(outcome.status);
    if (outcome.replayed) void reply.header('Idempotent-Replayed', 'true');
    return outcome.body;
  }

  @Get()
  @ApiOperation({
    summary:
      'Messages with a contact, or in a group you own or are a member of, newest first, with their receipts ' +
      '(limit 1–100, default 20; cursor from next_cursor)',
  })
  @ApiOkResponse({ type: MessageHistoryDto })
  @UserApiErrors(404)
  history(@CurrentUser() user: AuthenticatedUser, @Query() query: MessageHistoryQueryDto): Promise<MessageHistoryDto> {
    return this.messages.history(user.id, query);
  }
}
