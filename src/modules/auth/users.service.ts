import { Injectable } from '@nestjs/common';
import { ProblemError } from '../../common/errors/problem-error';
import { isId } from '../../common/ids';
import type { Tx } from '../../infra/database/sql-repository';
import { AuthenticatedUser, UserTier } from '../access/authenticated-user';
import { SessionCache } from '../access/session-cache';
import { MeDto, OperatorUserDto } from './dto/auth.dto';
import { UserEntity } from './entities/user.entity';
import { MessagesService } from '../messages/messages.service';
import { UsersRepository } from './users.repository';

/** Profiles of service users. */
@Injectable()
export class UsersService {
  constructor(
    private readonly users: UsersRepository,
    private readonly checkedSessions: SessionCache,
    private readonly messages: MessagesService,
  ) {}

  /** The profile read with the session check of this request (see Sessions.check): no query of its own. */
  me(user: AuthenticatedUser): MeDto {
    const { profile } = user;
    return { id: user.id, name: profile.name, email: profile.email, created_at: profile.createdAt.toISOString(), soul_id: profile.soulId };
  }

  /** Profile fields for other areas (exports, agents). */
  async profile(userId: string): Promise<UserEntity | null> {
    return this.users.findById(userId);
  }

  /**
   * Whether the account still stands: false once its row is gone and also
   * from the moment its deletion was requested (`DELETE /v1/me` lets go of the
   * identity at once; the worker deletes the row later), so callers answer a
   * deleted account the same way whichever side of the erasure they look from.
   */
  async stillExists(userId: string): Promise<boolean> {
    const user = await this.users.findById(userId);
    return user !== null && !user.idpSubject.startsWith(UsersRepository.RELEASED_SUBJECT_PREFIX);
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
  async restateVerifiedEmail(tx: Tx, userId: string, address: string | null): Promise<void> {
    if (address === null) {
      await this.users.releaseVerifiedEmail(tx, userId);
      return;
    }
    if (await this.users.holdsVerifiedEmail(tx, userId, address)) return;
    await this.users.takeVerifiedEmail(tx, userId, address);
    await this.messages.claimPendingForAddress(tx, userId, address);
  }

  /**
   * For the privacy area, inside its transaction: locks the user row (answers
   * the transaction's time, or null for an unknown user) and records or clears
   * the deletion of the user's soul. The callers drop the session cache's
   * entries for the user after their commit.
   */
  lockForSoulChange(tx: Tx, userId: string): Promise<Date | null> {
    return this.users.lockForUpdate(tx, userId);
  }

  markSoulDeleted(tx: Tx, userId: string, at: Date): Promise<void> {
    return this.users.markSoulDeleted(tx, userId, at);
  }

  clearSoulDeleted(tx: Tx, userId: string): Promise<void> {
    return this.users.clearSoulDeleted(tx, userId);
  }

  /**
   * For account deletion (privacy area), inside its transactions: the request
   * locks the user row (null for an unknown user) and releases the user's
   * identity at once (`UsersRepository.releaseIdentity`); the erasure job
   * deletes the row. The callers drop the session cache's
   * entries for the user after their commit.
   */
  lockForAccountDeletion(tx: Tx, userId: string): Promise<Date | null> {
    return this.users.lockForUpdate(tx, userId);
  }

  releaseIdentity(tx: Tx, userId: string): Promise<void> {
    return this.users.releaseIdentity(tx, userId);
  }

  deleteUser(tx: Tx, userId: string): Promise<boolean> {
    return this.users.deleteUser(tx, userId);
  }

  async setTier(userId: string, tier: UserTier): Promise<OperatorUserDto> {
    if (!isId(userId, 'usr')) throw new ProblemError('not_found', `No user ${userId}`);
    if (!(await this.users.setTier(userId, tier))) throw new ProblemError('not_found', `No user ${userId}`);
    await this.checkedSessions.forgetUserEverywhere(userId);
    const user = (await this.users.findById(userId))!;
    return { id: user.id, name: user.name, email: user.email, tier: user.tier };
  }
}
