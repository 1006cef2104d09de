import { Global, Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SoulModule } from '../soul/soul.module';
import { AccessTokens } from './access-tokens';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { DevAccountsRepository } from './dev-identity/dev-accounts.repository';
import { DevIdentityController } from './dev-identity/dev-identity.controller';
import { DevIdentityKeys } from './dev-identity/dev-identity-keys';
import { SessionEntity } from './entities/session.entity';
import { SigningKeyEntity } from './entities/signing-key.entity';
import { UserEntity } from './entities/user.entity';
import { IdentityTokenVerifier } from './identity-token.verifier';
import { OperatorUsersController } from './operator-users.controller';
import { SessionCache } from './session-cache';
import { SignInConfigController } from './sign-in-config.controller';
import { Sessions } from './sessions.service';
import { SigningKeys } from './signing-keys.service';
import { UserAuthGuard } from './user-auth.guard';
import { UserJwtStrategy } from './user-jwt.strategy';
import { UsersService } from './users.service';

/**
 * Global because every user API controller guards its routes with
 * `UserAuthGuard`, which needs the token verifier and the session check, and
 * some of those areas (soul) are imported by this module, so they cannot import it.
 */
@Global()
@Module({
  imports: [TypeOrmModule.forFeature([UserEntity, SessionEntity, SigningKeyEntity]), PassportModule, SoulModule],
  controllers: [AuthController, OperatorUsersController, DevIdentityController, SignInConfigController],
  providers: [
    SigningKeys,
    AccessTokens,
    IdentityTokenVerifier,
    DevIdentityKeys,
    DevAccountsRepository,
    Sessions,
    SessionCache,
    AuthService,
    UsersService,
    UserJwtStrategy,
    UserAuthGuard,
  ],
  exports: [AccessTokens, Sessions, SessionCache, SigningKeys, UsersService, UserAuthGuard],
})
export class AuthModule {}
