import { Module } from '@nestjs/common';
import { PassportModule } from '@nestjs/passport';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SoulModule } from '../soul/soul.module';
import { AccessTokens } from './access-tokens';
import { AuthController } from './auth.controller';
import { AuthService } from './auth.service';
import { SessionEntity } from './entities/session.entity';
import { SigningKeyEntity } from './entities/signing-key.entity';
import { UserEntity } from './entities/user.entity';
import { IdentityTokenVerifier } from './identity-token.verifier';
import { OperatorUsersController } from './operator-users.controller';
import { Sessions } from './sessions.service';
import { SigningKeys } from './signing-keys.service';
import { UserJwtStrategy } from './user-jwt.strategy';
import { UsersService } from './users.service';

@Module({
  imports: [PassportModule, TypeOrmModule.forFeature([UserEntity, SessionEntity, SigningKeyEntity]), SoulModule],
  controllers: [AuthController, OperatorUsersController],
  providers: [SigningKeys, AccessTokens, IdentityTokenVerifier, Sessions, AuthService, UsersService, UserJwtStrategy],
  exports: [AccessTokens, Sessions, SigningKeys, UsersService],
})
export class AuthModule {}
