import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessModule } from '../access/access.module';
import { SessionControl } from '../access/session-control.service';
import { SessionsController } from '../access/sessions.controller';
import { MessagesModule } from '../messages/messages.module';
import { SoulModule } from '../soul/soul.module';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { DevAccounts } from './dev-identity/dev-accounts.service';
import { DevIdentityController } from './dev-identity/dev-identity.controller';
import { DevIdentityKeys } from './dev-identity/dev-identity-keys';
import { UserEntity } from './entities/user.entity';
import { IdentityTokenVerifier } from './identity-token.verifier';
import { OperatorUsersController } from './operator-users.controller';
import { SignInConfigController } from './sign-in-config.controller';
import { UsersRepository } from './users.repository';
import { UsersService } from './users.service';

/**
 * Sign-in (the identity provider token exchanged for the service's own
 * access token, creating the user and their soul on the first one) and user
 * profiles. The guard, tokens and sessions every user route needs are
 * `AccessModule`'s, which imports no area, so this module may import `soul`.
 */
@Module({
  imports: [TypeOrmModule.forFeature([UserEntity]), AccessModule, SoulModule, MessagesModule],
  controllers: [AuthController, OperatorUsersController, DevIdentityController, SignInConfigController, SessionsController],
  providers: [UsersRepository, UsersService, AuthService, IdentityTokenVerifier, DevIdentityKeys, DevAccounts, SessionControl],
  exports: [UsersService, UsersRepository],
})
export class AuthModule {}
