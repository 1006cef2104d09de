import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthenticatedUser, CurrentUser } from '../access/authenticated-user';
import { UserApi } from '../access/user-auth.guard';
import { Authorizations } from './authorizations.service';
import { AuthorizeDto } from './dto/authorize.dto';
import { AuthorizationRequestDto, ConsentDto } from './dto/authorize-responses.dto';
import { UserApiErrors } from '../../common/openapi/error-responses';

@ApiTags('marketplace')
@UserApi()
@Controller('v1/oauth/authorize')
export class AuthorizeController {
  constructor(private readonly authorizations: Authorizations) {}

  @Get()
  @ApiOperation({ summary: 'What an app asks for (shown on the consent screen); validates the whole request' })
  @ApiOkResponse({ type: AuthorizationRequestDto })
  describe(@Query() query: AuthorizeDto) {
    return this.authorizations.describe(query);
  }

  @Post()
  @HttpCode(200)
  @ApiOperation({
    summary: 'The user consents: the package is installed and the app receives a PKCE authorization code at its redirect URI',
  })
  @ApiOkResponse({ type: ConsentDto })
  @UserApiErrors(404)
  consent(@CurrentUser() user: AuthenticatedUser, @Body() body: AuthorizeDto) {
    return this.authorizations.consent(user.id, body);
  }
}
