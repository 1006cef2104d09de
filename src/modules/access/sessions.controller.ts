import { Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { UserApiErrors } from '../../common/openapi/error-responses';
import { AuthenticatedUser, CurrentUser } from './authenticated-user';
import { RevokeAllQueryDto, RevokedSessionsDto, SessionListDto, SessionListQueryDto } from './dto/sessions.dto';
import { SessionControl } from './session-control.service';
import { UserApi } from './user-auth.guard';

@ApiTags('auth')
@UserApi()
@Controller('v1/sessions')
export class SessionsController {
  constructor(private readonly control: SessionControl) {}

  @Get()
  @ApiOperation({
    summary:
      'Your live sessions, newest first, with the client that signed in and when each was last used (limit 1–100, default 20; cursor from next_cursor)',
  })
  @ApiOkResponse({ type: SessionListDto })
  @UserApiErrors(400)
  list(@CurrentUser() user: AuthenticatedUser, @Query() query: SessionListQueryDto): Promise<SessionListDto> {
    return this.control.list(user, query);
  }

  @Post('revoke-all')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Sign out everywhere: revoke every live session (?keep_current=true keeps the calling one); their sockets close at once',
  })
  @ApiOkResponse({ type: RevokedSessionsDto })
  @UserApiErrors(400)
  revokeAll(@CurrentUser() user: AuthenticatedUser, @Query() query: RevokeAllQueryDto): Promise<RevokedSessionsDto> {
    return this.control.revokeAll(user, query.keep_current === 'true');
  }

  @Delete(':session_id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Revoke one of your live sessions (the calling one too); its tokens and sockets stop working at once' })
  @ApiNoContentResponse({ description: 'Session revoked' })
  @UserApiErrors(404)
  async revoke(@CurrentUser() user: AuthenticatedUser, @Param('session_id') sessionId: string): Promise<void> {
    await this.control.revoke(user, sessionId);
  }
}
