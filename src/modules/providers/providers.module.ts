import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { AccountsController } from './accounts.controller';
import { AppsController } from './apps.controller';
import { AppsService } from './apps.service';
import { PlatformAuthGuard, PlatformRateLimitGuard } from './auth/platform-auth.guard';
import { PlatformTokens } from './auth/platform-tokens';
import { DeveloperAccounts } from './developer-accounts.service';
import { DeveloperAuth } from './developer-auth.service';
import { OAuthController } from './oauth.controller';
import { OAuthTokens } from './oauth-tokens.service';
import { DeveloperSuspensions } from './developer-suspensions.service';
import { OperatorProvidersController } from './operator-providers.controller';

/** Provider platform: developer accounts, console login, apps, OAuth tokens and the platform's authentication. */
@Module({
  imports: [AuthModule],
  controllers: [AccountsController, AppsController, OAuthController, OperatorProvidersController],
  providers: [
    DeveloperAccounts,
    DeveloperAuth,
    DeveloperSuspensions,
    AppsService,
    OAuthTokens,
    PlatformTokens,
    PlatformAuthGuard,
    PlatformRateLimitGuard,
  ],
  exports: [AppsService, OAuthTokens, PlatformTokens, PlatformAuthGuard, PlatformRateLimitGuard],
})
export class ProvidersModule {}
