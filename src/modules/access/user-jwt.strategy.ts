import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { decodeProtectedHeader } from 'jose';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { ApiError } from '../../common/errors/api-error';
import { ACCESS_TOKEN_AUDIENCE, AccessTokens } from './access-tokens';
import { AuthenticatedUser } from './authenticated-user';
import { SessionCache } from './session-cache';
import { SigningKeys, TOKEN_ALGORITHM } from './signing-keys.service';

export const USER_JWT = 'user-jwt';
const bearer = ExtractJwt.fromAuthHeaderAsBearerToken();

/**
 * passport-jwt over the service's own key set, for tokens this process has
 * not verified yet: the key of the token's `kid` is handed over as a cached
 * KeyObject (never a PEM parsed per request). A verified token is remembered
 * until its `exp` (AccessTokens), so later requests with it skip this step;
 * the session and user behind it are checked on every request.
 */
@Injectable()
export class UserJwtStrategy extends PassportStrategy(Strategy, USER_JWT) {
  constructor(
    keys: SigningKeys,
    private readonly tokens: AccessTokens,
    private readonly sessions: SessionCache,
  ) {
    super({
      jwtFromRequest: bearer,
      algorithms: [TOKEN_ALGORITHM],
      issuer: tokens.issuer,
      audience: ACCESS_TOKEN_AUDIENCE,
      ignoreExpiration: false,
      passReqToCallback: true,
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

  async validate(
    request: Parameters<typeof bearer>[0],
    payload: { sub?: unknown; sid?: unknown; exp?: unknown },
  ): Promise<AuthenticatedUser> {
    if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string' || typeof payload.exp !== 'number')
      throw new ApiError('UNAUTHORIZED', 'Bearer token lacks its claims');
    const token = bearer(request);
    if (token) this.tokens.remember(token, { sub: payload.sub, sid: payload.sid, exp: payload.exp });
    const user = await this.sessions.resolve(payload.sub, payload.sid);
    if (!user) throw new ApiError('UNAUTHORIZED', 'The session of this token has ended; log in again');
    return user;
  }
}
