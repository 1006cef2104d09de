import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { ProblemError } from '../../common/errors/problem-error';
import { isId } from '../../common/ids';
import { AuthenticatedUser } from './authenticated-user';
import { MeDto, OperatorUserDto } from './dto/auth.dto';
import { UserEntity, UserTier } from './entities/user.entity';
import { SessionCache } from './session-cache';

/** First key of the advisory lock a claim of a verified address takes (the second is the address's hash). */
const VERIFIED_EMAIL_LOCK = 7_340_213;

/** Profiles of service users. */
@Injectable()
export class UsersService {
  constructor(
    @InjectRepository(UserEntity) private readonly users: Repository<UserEntity>,
    private readonly checkedSessions: SessionCache,
  ) {}

  /** The profile read with the session check of this request (see Sessions.check): no query of its own. */
  me(user: AuthenticatedUser): MeDto {
    const { profile } = user;
    return { id: user.id, name: profile.name, email: profile.email, created_at: profile.createdAt.toISOString(), soul_id: profile.soulId };
  }

  /** Profile fields for other areas (exports, agents). */
  async profile(userId: string): Promise<UserEntity | null> {
    return this.users.findOne({ where: { id: userId } });
  }

  /**
   * Makes `address` the user's verified address, inside the login transaction.
   * `address` is the token's email when the token says `email_verified: true`,
   * else null. The latest verified proof wins: the address is taken from
   * whoever held it (their `verified_email` becomes NULL), and contacts with
   * that email reach the new holder from this commit on (contacts derive their
   * link from `verified_email`), and so do the messages sent to such a contact
   * while no user held the address. A login without a verified email lets go of
   * the address the user held; it never takes anyone else's.
   */
  async restateVerifiedEmail(manager: EntityManager, userId: string, address: string | null): Promise<void> {
    if (address === null) {
      await manager.query(`UPDATE users SET verified_email = NULL WHERE id = $1 AND verified_email IS NOT NULL`, [userId]);
      return;
    }
    const [current]: Array<{ held: boolean }> = await manager.query(`SELECT verified_email = lower($2) AS held FROM users WHERE id = $1`, [
      userId,
      address,
    ]);
    if (current?.held) return;
    // Claims of one address queue here, so concurrent logins never collide on the unique index; the next one takes it over.
    await manager.query(`SELECT pg_advisory_xact_lock($1, hashtext(lower($2)))`, [VERIFIED_EMAIL_LOCK, address]);
    await manager.query(`UPDATE users SET verified_email = NULL, updated_at = now() WHERE verified_email = lower($1) AND id <> $2`, [
      address,
      userId,
    ]);
    await manager.query(`UPDATE users SET verified_email = lower($1) WHERE id = $2`, [address, userId]);
    // The pending-contact rule (docs/decisions.md, issue 23): what was sent to this address before anyone held it
    // is now this user's (history, inbox, `sync`). Deliveries that already reached an earlier holder stay theirs.
    await manager.query(
      `UPDATE message_recipients r SET recipient_user_id = $2
         FROM contacts c
        WHERE c.id = r.contact_id AND r.recipient_user_id IS NULL
          AND c.email IS NOT NULL AND lower(c.email) = lower($1) AND c.user_id <> $2`,
      [address, userId],
    );
  }

  async setTier(userId: string, tier: UserTier): Promise<OperatorUserDto> {
    if (!isId(userId, 'usr')) throw new ProblemError('not_found', `No user ${userId}`);
    const result = await this.users.update({ id: userId }, { tier });
    if (!result.affected) throw new ProblemError('not_found', `No user ${userId}`);
    this.checkedSessions.forgetUser(userId);
    const user = (await this.users.findOne({ where: { id: userId } }))!;
    return { id: user.id, name: user.name, email: user.email, tier: user.tier };
  }
}
