import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, Like } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';
import type { UserTier } from '../access/authenticated-user';
import type { DevAccount } from './dev-identity/dev-identity-keys';
import { UserEntity } from './entities/user.entity';

/** First key of the advisory lock a claim of a verified address takes (the second is the address's hash). */
const VERIFIED_EMAIL_LOCK = 7_340_213;

/** A user as a login leaves it, and whether this login created it. */
export interface SignedInUser {
  id: string;
  name: string;
  email: string | null;
  created: boolean;
}

/** The `users` table: service users, keyed by their identity provider subject. */
@Injectable()
export class UsersRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /** Upsert on the identity provider subject: concurrent first logins create one user. */
  async upsertByIdpSubject(tx: Tx, user: { id: string; subject: string; name: string; email: string | null }): Promise<SignedInUser> {
    const [row] = await this.rows<SignedInUser>(
      `INSERT INTO users (id, idp_subject, name, email) VALUES ($1, $2, $3, $4)
       ON CONFLICT (idp_subject) DO UPDATE
         SET name = COALESCE(EXCLUDED.name, users.name), email = COALESCE(EXCLUDED.email, users.email), updated_at = now()
       RETURNING id, name, email, (xmax = 0) AS created`,
      [user.id, user.subject, user.name, user.email],
      tx,
    );
    return row;
  }

  findById(userId: string): Promise<UserEntity | null> {
    return this.dataSource.getRepository(UserEntity).findOne({ where: { id: userId } });
  }

  /** Whether a user with this id existed (and now has the tier). */
  async setTier(userId: string, tier: UserTier): Promise<boolean> {
    const result = await this.dataSource.getRepository(UserEntity).update({ id: userId }, { tier });
    return Boolean(result.affected);
  }

  async releaseVerifiedEmail(tx: Tx, userId: string): Promise<void> {
    await this.changed(`UPDATE users SET verified_email = NULL WHERE id = $1 AND verified_email IS NOT NULL`, [userId], tx);
  }

  async holdsVerifiedEmail(tx: Tx, userId: string, address: string): Promise<boolean> {
    const current = await this.first<{ held: boolean }>(
      `SELECT verified_email = lower($2) AS held FROM users WHERE id = $1`,
      [userId, address],
      tx,
    );
    return current?.held === true;
  }

  /**
   * Gives `address` to the user, taking it from whoever held it (their
   * `verified_email` becomes NULL). Claims of one address queue on an advisory
   * lock, so concurrent logins never collide on the unique index; the next one takes it over.
   */
  async takeVerifiedEmail(tx: Tx, userId: string, address: string): Promise<void> {
    await this.execute(`SELECT pg_advisory_xact_lock($1, hashtext(lower($2)))`, [VERIFIED_EMAIL_LOCK, address], tx);
    await this.changed(
      `UPDATE users SET verified_email = NULL, updated_at = now() WHERE verified_email = lower($1) AND id <> $2`,
      [address, userId],
      tx,
    );
    await this.changed(`UPDATE users SET verified_email = lower($1) WHERE id = $2`, [address, userId], tx);
  }

  /** Locks the user row until the end of `tx`; answers the transaction's time, or null when the user does not exist. */
  async lockForUpdate(tx: Tx, userId: string): Promise<Date | null> {
    const locked = await this.first<{ now: Date }>(`SELECT now() AS now FROM users WHERE id = $1 FOR UPDATE`, [userId], tx);
    return locked?.now ?? null;
  }

  async markSoulDeleted(tx: Tx, userId: string, at: Date): Promise<void> {
    await this.execute(`UPDATE users SET soul_deleted_at = $2 WHERE id = $1`, [userId, at], tx);
  }

  async clearSoulDeleted(tx: Tx, userId: string): Promise<void> {
    await this.execute(`UPDATE users SET soul_deleted_at = NULL WHERE id = $1`, [userId], tx);
  }

  /**
   * Lets go of everything that identifies the user while their account is
   * being erased: the identity provider subject (a sign-in with it creates a
   * new user), name, email and verified address (contacts stop reaching them).
   * The row itself goes when the erasure completes (`deleteUser`).
   */
  async releaseIdentity(tx: Tx, userId: string): Promise<void> {
    await this.execute(
      `UPDATE users SET idp_subject = '${UsersRepository.RELEASED_SUBJECT_PREFIX}' || id, name = '', email = NULL, verified_email = NULL, updated_at = now() WHERE id = $1`,
      [userId],
      tx,
    );
  }

  /** Prefix of `idp_subject` once the account's deletion was requested (`releaseIdentity`). */
  static readonly RELEASED_SUBJECT_PREFIX = 'deleted:';

  /** Deletes the user row; every table keyed to it by a cascading foreign key goes with it. Whether it existed. */
  async deleteUser(tx: Tx, userId: string): Promise<boolean> {
    const { count } = await this.changed(`DELETE FROM users WHERE id = $1`, [userId], tx);
    return count === 1;
  }

  /** The test users of the development identity provider: users who signed in through it (their subject starts with `dev-`). */
  async listDevAccounts(limit: number): Promise<DevAccount[]> {
    const rows = await this.dataSource
      .getRepository(UserEntity)
      .find({ where: { idpSubject: Like('dev-%') }, order: { createdAt: 'ASC' }, take: limit });
    return rows.filter((row) => row.email !== null).map((row) => ({ subject: row.idpSubject, name: row.name, email: row.email! }));
  }

  async findDevAccount(subject: string): Promise<DevAccount | null> {
    const row = await this.dataSource.getRepository(UserEntity).findOne({ where: { idpSubject: subject } });
    return row && row.email !== null && subject.startsWith('dev-') ? { subject, name: row.name, email: row.email } : null;
  }
}
