import { Body, Controller, Get, Headers, HttpCode, Ip, Post, UseGuards } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AddressRateLimitGuard } from '../../common/rate-limit/user-rate-limit.guard';
import { AuthenticatedUser, CurrentUser } from '../access/authenticated-user';
import { sessionClient } from '../access/session-client';
import { SigningKeys } from '../access/signing-keys.service';
import { UserApi } from '../access/user-auth.guard';
import { UserApiErrors } from '../../common/openapi/error-responses';
import { AuthService } from './auth.service';
import { LoginDto, LoginResultDto, MeDto } from './dto/auth.dto';
import { UsersService } from './users.service';
import { JwksDto } from './dto/auth-responses.dto';

@ApiTags('auth')
@Controller()
export class AuthController {
  constructor(
    private readonly auth: AuthService,
    private readonly users: UsersService,
    private readonly keys: SigningKeys,
  ) {}

  @Post('v1/auth/login')
  @HttpCode(200)
  @UseGuards(AddressRateLimitGuard)
  @ApiOperation({ summary: 'Exchange an identity provider ID token for a service access token (1 hour)' })
  @ApiOkResponse({ type: LoginResultDto })
  @UserApiErrors(401)
  login(@Body() body: LoginDto, @Headers('user-agent') userAgent: string | undefined, @Ip() ip: string): Promise<LoginResultDto> {
    // The session list (`GET /v1/sessions`) shows which client signed in.
    return this.auth.login(body.firebase_token, sessionClient(userAgent, ip));
  }

  @Post('v1/auth/logout')
  @HttpCode(204)
  @UserApi()
  @ApiOperation({ summary: 'Revoke the session of the presented token' })
  @ApiNoContentResponse({ description: 'Session revoked' })
  async logout(@CurrentUser() user: AuthenticatedUser): Promise<void> {
    await this.auth.logout(user);
  }

  @Get('v1/me')
  @UserApi()
  @ApiOperation({ summary: "The authenticated user's profile" })
  @ApiOkResponse({ type: MeDto })
  me(@CurrentUser() user: AuthenticatedUser): MeDto {
    return this.users.me(user);
  }

  @Get('.well-known/jwks.json')
  @ApiOperation({ summary: 'Public keys that verify service access tokens' })
  @ApiOkResponse({ type: JwksDto })
  jwks(): { keys: object[] } {
    return this.keys.jwks();
  }
}
