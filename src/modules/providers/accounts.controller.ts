import { Body, Controller, Get, HttpCode, Ip, Post, UseGuards } from '@nestjs/common';
import { ApiAcceptedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AddressRateLimitGuard } from '../../common/rate-limit/user-rate-limit.guard';
import { PlatformRoute } from './auth/platform-auth.guard';
import { PlatformPrincipal, Principal } from './auth/platform-principal';
import { DeveloperAccounts } from './developer-accounts.service';
import { DeveloperAuth } from './developer-auth.service';
import {
  AccountDto,
  AccountRequestedDto,
  ConfirmMfaDto,
  CreateAccountDto,
  DeveloperLoginDto,
  DeveloperTokenDto,
  PasswordResetConfirmDto,
  PasswordResetDoneDto,
  PasswordResetRequestDto,
  PasswordResetRequestedDto,
  VerifyEmailDto,
} from './dto/account.dto';
import { MfaEnrolmentDto, VerificationSentDto } from './dto/provider-responses.dto';
import { PlatformProblems } from '../../common/openapi/error-responses';
import { PasswordResets } from './password-resets.service';

/** Console routes act for the signed-in developer, before the email is verified too. */
const CONSOLE = { principals: ['developer' as const], verifiedEmail: false };

function developerId(principal: PlatformPrincipal): string {
  return principal.developerId;
}

@ApiTags('provider account')
@Controller('v1/providers')
export class AccountsController {
  constructor(
    private readonly accounts: DeveloperAccounts,
    private readonly auth: DeveloperAuth,
    private readonly resets: PasswordResets,
  ) {}

  @Post('account')
  @HttpCode(202)
  @UseGuards(AddressRateLimitGuard)
  @ApiOperation({
    summary: 'Step 1: create a developer account; a verification link is emailed',
    description:
      'Answers 202 with the same body whether or not the address already has an account, so the answer cannot tell who is registered. ' +
      'A new address gets a verification link (valid 24 hours); the owner of a taken address gets a notice instead, and the account is left unchanged. ' +
      'The account id is returned by GET /v1/providers/account after login.',
  })
  @ApiAcceptedResponse({ type: AccountRequestedDto })
  create(@Body() body: CreateAccountDto): Promise<AccountRequestedDto> {
    return this.accounts.create(body);
  }

  @Get('account')
  @PlatformRoute(CONSOLE)
  @ApiOperation({ summary: 'The signed-in developer account' })
  @ApiOkResponse({ type: AccountDto })
  get(@Principal() principal: PlatformPrincipal): Promise<AccountDto> {
    return this.accounts.get(developerId(principal));
  }

  @Post('account/verify')
  @HttpCode(200)
  @UseGuards(AddressRateLimitGuard)
  @ApiOperation({ summary: 'Step 2: verify the email address with the token from the link (single use, 24 hours)' })
  @ApiOkResponse({ type: AccountDto })
  @PlatformProblems(409)
  verify(@Body() body: VerifyEmailDto): Promise<AccountDto> {
    return this.accounts.verify(body.token);
  }

  @Post('account/verify/resend')
  @HttpCode(202)
  @PlatformRoute(CONSOLE)
  @ApiOperation({ summary: 'Email a new verification link; earlier links stop working' })
  @ApiAcceptedResponse({ type: VerificationSentDto })
  @PlatformProblems(409)
  resend(@Principal() principal: PlatformPrincipal): Promise<{ sent: true }> {
    return this.accounts.resend(developerId(principal));
  }

  @Post('account/mfa')
  @HttpCode(200)
  @PlatformRoute(CONSOLE)
  @ApiOperation({ summary: 'Start TOTP enrolment: returns the secret and an otpauth URI (shown once)' })
  @ApiOkResponse({ type: MfaEnrolmentDto })
  @PlatformProblems(409)
  enrolMfa(@Principal() principal: PlatformPrincipal): Promise<{ secret: string; otpauth_uri: string }> {
    return this.accounts.enrolMfa(developerId(principal));
  }

  @Post('account/mfa/confirm')
  @HttpCode(200)
  @PlatformRoute(CONSOLE)
  @ApiOperation({ summary: 'Turn MFA on with a current code' })
  @ApiOkResponse({ type: AccountDto })
  @PlatformProblems(409)
  confirmMfa(@Principal() principal: PlatformPrincipal, @Body() body: ConfirmMfaDto): Promise<AccountDto> {
    return this.accounts.confirmMfa(developerId(principal), body.code);
  }

  @Post('account/password/reset')
  @HttpCode(202)
  @UseGuards(AddressRateLimitGuard)
  @ApiOperation({
    summary: 'Forgotten password: email a reset link (valid 1 hour, single use)',
    description:
      'Answers 202 with the same body, after the same work (one queued job), whether or not the address has an account; the worker mails a link to an active account only, so neither the answer nor its timing tells who is registered. ' +
      'Requests are counted per email address (5 an hour, known or not) and per client address (20 an hour) before anything is looked up; past either, 429 `rate_limit_exceeded` with `Retry-After`. ' +
      'The link opens `/console/reset-password?token=…`; a newer request invalidates the earlier unused links.',
  })
  @ApiAcceptedResponse({ type: PasswordResetRequestedDto })
  requestPasswordReset(@Body() body: PasswordResetRequestDto, @Ip() ip: string): Promise<PasswordResetRequestedDto> {
    return this.resets.request(body, ip);
  }

  @Post('account/password/reset/confirm')
  @HttpCode(200)
  @UseGuards(AddressRateLimitGuard)
  @ApiOperation({
    summary: 'Set a new password with the token from a reset link',
    description:
      'An unknown, used, replaced or expired token answers 400 `invalid_reset_token`. The password follows the sign-up rules (400 `invalid_format`, the token stays usable). ' +
      'On success the link is used up and, in the same transaction, every console session of the account ends (its console tokens are refused at once, on every instance); ' +
      "the apps' client secrets and app tokens are left as they are. The email address counts as verified. A suspended account answers 403 `account_suspended` and nothing changes.",
  })
  @ApiOkResponse({ type: PasswordResetDoneDto })
  @PlatformProblems(400, 403)
  confirmPasswordReset(@Body() body: PasswordResetConfirmDto): Promise<PasswordResetDoneDto> {
    return this.resets.confirm(body);
  }

  @Post('auth/login')
  @HttpCode(200)
  @UseGuards(AddressRateLimitGuard)
  @ApiOperation({ summary: 'Developer console login (email, password, and totp when MFA is on)' })
  @ApiOkResponse({ type: DeveloperTokenDto })
  @PlatformProblems(401, 403)
  login(@Body() body: DeveloperLoginDto, @Ip() ip: string): Promise<DeveloperTokenDto> {
    return this.auth.login(body, ip);
  }

  @Post('auth/logout')
  @HttpCode(204)
  @PlatformRoute(CONSOLE)
  @ApiOperation({ summary: 'End the console session of this token' })
  @ApiNoContentResponse({ description: 'Session ended' })
  async logout(@Principal() principal: PlatformPrincipal): Promise<void> {
    if (principal.kind === 'developer') await this.auth.logout(principal.sessionId);
  }
}
