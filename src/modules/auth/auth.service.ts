import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryFailedError } from 'typeorm';
import { newId } from '../../common/ids';
import { SoulService } from '../soul/soul.service';
import { ACCESS_TOKEN_TTL_SECONDS, AccessTokens } from '../access/access-tokens';
import { SessionCache } from '../access/session-cache';
import type { SessionClient } from '../access/session-client';
import { Sessions } from '../access/sessions.service';
import { LoginResultDto } from './dto/auth.dto';
import { IdentityTokenVerifier } from './identity-token.verifier';
import { UsersRepository } from './users.repository';
import { UsersService } from './users.service';

/** Deadlock, serialization failure, unique violation: a concurrent login got in the way; the whole login runs again. */
const RETRYABLE_CODES = new Set(['40P01', '40001', '23505']);
const LOGIN_ATTEMPTS = 3;

async function retryOnConflict<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      const code = error instanceof QueryFailedError ? (error.driverError as { code?: string } | undefined)?.code : undefined;
      if (attempt >= LOGIN_ATTEMPTS || code === undefined || !RETRYABLE_CODES.has(code)) throw error;
    }
  }
}

/** Login: trade a verified identity provider token for the service's own access token. */
@Injectable()
export class AuthService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly verifier: IdentityTokenVerifier,
    private readonly tokens: AccessTokens,
    private readonly sessions: Sessions,
    private readonly souls: SoulService,
    private readonly checkedSessions: SessionCache,
    private readonly users: UsersService,
    private readonly userRows: UsersRepository,
  ) {}

  async login(firebaseToken: string, client: SessionClient): Promise<LoginResultDto> {
    const identity = await this.verifier.verify(firebaseToken);
    const expiresAt = new Date(Date.now() + ACCESS_TOKEN_TTL_SECONDS * 1000);

    // Only an address the provider vouches for takes part in linking contacts; `email` stays the display address.
    const verifiedEmail = identity.emailVerified ? identity.email : null;

    const { user, sessionId } = await retryOnConflict(() =>
      this.dataSource.transaction(async (manager) => {
        // Upsert on the identity provider subject: concurrent first logins create one user.
        const row = await this.userRows.upsertByIdpSubject(manager, {
          id: newId('usr'),
          subject: identity.subject,
          name: identity.name ?? identity.email?.split('@')[0] ?? '',
          email: identity.email,
        });
        if (row.created) await this.souls.createInitial(manager, row.id);
        await this.users.restateVerifiedEmail(manager, row.id, verifiedEmail);
        const session = await this.sessions.open(manager, row.id, expiresAt, client);
        return { user: row, sessionId: session.id };
      }),
    );
    // A later login may have changed the name or email that checked sessions of this user carry.
    if (!user.created) this.checkedSessions.forgetUser(user.id);

    return {
      token: await this.tokens.issue(user.id, sessionId, expiresAt),
      expires_at: expiresAt.toISOString(),
      user: { id: user.id, name: user.name, email: user.email },
    };
  }

  async logout(user: { id: string; sessionId: string }): Promise<void> {
    await this.sessions.revoke(user.sessionId);
    await this.checkedSessions.forgetUserEverywhere(user.id);
  }
}
