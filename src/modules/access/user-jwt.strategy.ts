import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { decodeProtectedHeader } from 'jose';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { ApiError } from '../../common/errors/api-error';
import { ACCESS_TOKEN_AUDIENCE, AccessTokenClaims, AccessTokens } from './access-tokens';
import { SigningKeys, TOKEN_ALGORITHM } from './signing-keys.service';

export const USER_JWT = 'user-jwt';
const bearer = ExtractJwt.fromAuthHeaderAsBearerToken();

/**
 * passport-jwt over the service's own key set, for tokens this process has
 * not verified yet: the key of the token's `kid` is handed over as a cached
 * KeyObject (never a PEM parsed per request). It answers the token's claims
 * only; the guard (UserAuthGuard) remembers them until `exp` and checks the
 * session and user behind them on every request, with its own application's
 * session cache. Passport keeps one strategy per name for the whole process,
 * so this instance may serve another application in the same process (two
 * api instances in one test process); nothing here is the application's own.
 */
@Injectable()
export class UserJwtStrategy extends PassportStrategy(Strategy, USER_JWT) {
  constructor(keys: SigningKeys, tokens: AccessTokens) {
    super({
      jwtFromRequest: bearer,
      algorithms: [TOKEN_ALGORITHM],
      issuer: tokens.issuer,
      audience: ACCESS_TOKEN_AUDIENCE,
      ignoreExpiration: false,
      secretOrKeyProvider: (_request: unknown, rawJwt: string, done: (error: Error | null, key?: string | Buffer) => void) => {
        let kid: string | undefined;
        try {
          kid = decodeProtectedHeader(rawJwt).kid;
        } catch {
          return done(new ApiError('UNAUTHORIZED', 'Malformed bearer token'));
        }
        const key = keys.verificationKey(kid);
        if (!key) return done(new ApiError('UNAUTHORIZED', 'Bearer token was signed with an unknown key'));
        // jsonwebtoken (under passport-jwt) accepts a KeyObject; the typings only name string and Buffer.
        done(null, key as unknown as Buffer);
      },
    });
  }

  validate(payload: { sub?: unknown; sid?: unknown; exp?: unknown }): AccessTokenClaims {
    if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string' || typeof payload.exp !== 'number')
      throw new ApiError('UNAUTHORIZED', 'Bearer token lacks its claims');
    return { sub: payload.sub, sid: payload.sid, exp: payload.exp };
  }
}
