import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { AccountsController } from './accounts.controller';
import { AppsController } from './apps.controller';
import { AppsRepository } from './apps.repository';
import { DeveloperSessionsRepository } from './developer-sessions.repository';
import { DevelopersRepository } from './developers.repository';
import { EmailVerificationsRepository } from './email-verifications.repository';
import { OAuthAuthorizationCodesRepository } from './oauth-authorization-codes.repository';
import { OAuthRefreshTokensRepository } from './oauth-refresh-tokens.repository';
import { AppsService } from './apps.service';
import { PlatformAuthGuard, PlatformRateLimitGuard } from './auth/platform-auth.guard';
import { PlatformStandings } from './auth/platform-standings';
import { PlatformTokens } from './auth/platform-tokens';
import { DeveloperAccounts } from './developer-accounts.service';
import { DeveloperAuth } from './developer-auth.service';
import { OAuthController } from './oauth.controller';
import { OAuthTokens } from './oauth-tokens.service';
import { DeveloperSuspensions } from './developer-suspensions.service';
import { OperatorProvidersController } from './operator-providers.controller';
import { PasswordResetsRepository } from './password-resets.repository';
import { PasswordResets } from './password-resets.service';

/** Provider platform: developer accounts, console login, apps, OAuth tokens and the platform's authentication. */
@Module({
  imports: [AccessModule],
  controllers: [AccountsController, AppsController, OAuthController, OperatorProvidersController],
  providers: [
    AppsRepository,
    DevelopersRepository,
    DeveloperSessionsRepository,
    EmailVerificationsRepository,
    OAuthAuthorizationCodesRepository,
    OAuthRefreshTokensRepository,
    PasswordResetsRepository,
    DeveloperAccounts,
    DeveloperAuth,
    DeveloperSuspensions,
    PasswordResets,
    AppsService,
    OAuthTokens,
    PlatformTokens,
    PlatformStandings,
    PlatformAuthGuard,
    PlatformRateLimitGuard,
  ],
  // The repositories are exported for reading (and for PlatformAuthGuard, which other areas' controllers use); writes go through the services.
  exports: [
    AppsRepository,
    DevelopersRepository,
    DeveloperSessionsRepository,
    EmailVerificationsRepository,
    OAuthAuthorizationCodesRepository,
    OAuthRefreshTokensRepository,
    AppsService,
    OAuthTokens,
    PasswordResets,
    PlatformTokens,
    PlatformStandings,
    PlatformAuthGuard,
    PlatformRateLimitGuard,
  ],
})
export class ProvidersModule {}
