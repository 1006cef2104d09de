import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { newId } from '../../common/ids';
import { SoulService } from '../soul/soul.service';
import { ACCESS_TOKEN_TTL_SECONDS, AccessTokens } from './access-tokens';
import { LoginResultDto } from './dto/auth.dto';
import { IdentityTokenVerifier } from './identity-token.verifier';
import { SessionCache } from './session-cache';
import { Sessions } from './sessions.service';

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
  ) {}

  async login(firebaseToken: string): Promise<LoginResultDto> {
    const identity = await this.verifier.verify(firebaseToken);
    const expiresAt = new Date(Date.now() + ACCESS_TOKEN_TTL_SECONDS * 1000);

    const { user, sessionId } = await this.dataSource.transaction(async (manager) => {
      // Upsert on the identity provider subject: concurrent first logins create one user.
      const [row]: Array<{ id: string; name: string; email: string | null; created: boolean }> = await manager.query(
        `INSERT INTO users (id, idp_subject, name, email) VALUES ($1, $2, $3, $4)
         ON CONFLICT (idp_subject) DO UPDATE
           SET name = COALESCE(EXCLUDED.name, users.name), email = COALESCE(EXCLUDED.email, users.email), updated_at = now()
         RETURNING id, name, email, (xmax = 0) AS created`,
        [newId('usr'), identity.subject, identity.name ?? identity.email?.split('@')[0] ?? '', identity.email],
      );
      if (row.created) await this.souls.createInitial(manager, row.id);
      const session = await this.sessions.open(manager, row.id, expiresAt);
      return { user: row, sessionId: session.id };
    });
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
    this.checkedSessions.forgetUser(user.id);
  }
}
