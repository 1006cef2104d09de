import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { decodeProtectedHeader } from 'jose';
import { ExtractJwt, Strategy } from 'passport-jwt';
import { ApiError } from '../../common/errors/api-error';
import { ACCESS_TOKEN_AUDIENCE, AccessTokens } from './access-tokens';
import { AuthenticatedUser } from './authenticated-user';
import { Sessions } from './sessions.service';
import { SigningKeys, TOKEN_ALGORITHM } from './signing-keys.service';

export const USER_JWT = 'user-jwt';

/** passport-jwt over the service's own key set; then the session and the user must still exist. */
@Injectable()
export class UserJwtStrategy extends PassportStrategy(Strategy, USER_JWT) {
  constructor(
    keys: SigningKeys,
    tokens: AccessTokens,
    private readonly sessions: Sessions,
  ) {
    const pems = new Map<string, string>();
    super({
      jwtFromRequest: ExtractJwt.fromAuthHeaderAsBearerToken(),
      algorithms: [TOKEN_ALGORITHM],
      issuer: tokens.issuer,
      audience: ACCESS_TOKEN_AUDIENCE,
      ignoreExpiration: false,
      secretOrKeyProvider: (_request: unknown, rawJwt: string, done: (error: Error | null, key?: string) => void) => {
        let kid: string | undefined;
        try {
          kid = decodeProtectedHeader(rawJwt).kid;
        } catch {
          return done(new ApiError('UNAUTHORIZED', 'Malformed bearer token'));
        }
        const pem = kid === undefined ? undefined : pems.get(kid);
        if (pem) return done(null, pem);
        const key = keys.verificationKey(kid);
        if (!key || kid === undefined) return done(new ApiError('UNAUTHORIZED', 'Bearer token was signed with an unknown key'));
        // passport-jwt wants PEM; export once per key, not once per request.
        const exported = key.export({ type: 'spki', format: 'pem' }).toString();
        pems.set(kid, exported);
        done(null, exported);
      },
    });
  }

  async validate(payload: { sub?: unknown; sid?: unknown }): Promise<AuthenticatedUser> {
    if (typeof payload.sub !== 'string' || typeof payload.sid !== 'string')
      throw new ApiError('UNAUTHORIZED', 'Bearer token lacks its claims');
    const user = await this.sessions.resolve(payload.sub, payload.sid);
    if (!user) throw new ApiError('UNAUTHORIZED', 'The session of this token has ended; log in again');
    return user;
  }
}
