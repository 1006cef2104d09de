import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessTokens } from './access-tokens';
import { RuntimeTokens } from './runtime-tokens';
import { SessionEntity } from './entities/session.entity';
import { SigningKeyEntity } from './entities/signing-key.entity';
import { SessionCache } from './session-cache';
import { Sessions } from './sessions.service';
import { SessionsRepository } from './sessions.repository';
import { SigningKeys } from './signing-keys.service';
import { SigningKeysRepository } from './signing-keys.repository';
import { UserAuthGuard } from './user-auth.guard';
import { UserJwtStrategy } from './user-jwt.strategy';

/**
 * Who calls the user API: the service's signing keys, its access tokens, the
 * sessions behind them (with the per-process session cache) and the guard
 * that checks both. It imports no area, so every area with user routes
 * imports it (sign-in itself, which creates the soul, is `AuthModule`'s).
 */
@Module({
  imports: [TypeOrmModule.forFeature([SessionEntity, SigningKeyEntity]), PassportModule],
  providers: [
    SigningKeysRepository,
    SigningKeys,
    AccessTokens,
    RuntimeTokens,
    SessionsRepository,
    Sessions,
    SessionCache,
    UserJwtStrategy,
    UserAuthGuard,
  ],
  exports: [AccessTokens, RuntimeTokens, Sessions, SessionCache, SigningKeys, UserAuthGuard, SessionsRepository, SigningKeysRepository],
})
export class AccessModule {}
