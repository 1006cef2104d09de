import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthenticatedUser, CurrentUser } from '../access/authenticated-user';
import { UserApi } from '../access/user-auth.guard';
import { UserApiErrors } from '../../common/openapi/error-responses';
import { ConversationListDto, ConversationListQueryDto } from './dto/conversation.dto';
import { ConversationsService } from './conversations.service';

@ApiTags('messages')
@UserApi()
@Controller('v1/conversations')
export class ConversationsController {
  constructor(private readonly conversations: ConversationsService) {}

  @Get()
  @ApiOperation({
    summary:
      'Your inbox: contacts and groups (yours and those you are a member of) by last message, newest first, with unread counts ' +
      '(limit 1–100, default 20; cursor from next_cursor)',
  })
  @ApiOkResponse({ type: ConversationListDto })
  @UserApiErrors(400)
  list(@CurrentUser() user: AuthenticatedUser, @Query() query: ConversationListQueryDto): Promise<ConversationListDto> {
    return this.conversations.list(user.id, query);
  }
}
