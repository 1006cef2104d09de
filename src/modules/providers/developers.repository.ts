import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { INSTALL_TARGETS_CHANNEL } from '../../infra/database/change-channels';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';

/** A developer account as the account API shows it (see `toAccountDto`). */
export interface DeveloperRow {
  id: string;
  company_name: string;
  email: string;
  email_verified_at: Date | null;
  mfa_enabled_at: Date | null;
  status: string;
  created_at: Date;
}

const ACCOUNT_COLUMNS = 'id, company_name, email, email_verified_at, mfa_enabled_at, status, created_at';

/** What the console login checks. */
export interface DeveloperCredentialsRow {
  id: string;
  password_hash: string;
  status: string;
  mfa_enabled_at: Date | null;
  mfa_secret_encrypted: string | null;
}

/** A developer's TOTP enrolment. */
export interface DeveloperMfaRow {
  email: string;
  mfa_secret_encrypted: string | null;
  mfa_enabled_at: Date | null;
}

/** Who owns a taken address, for the sign-up notice. */
export interface EmailOwnerRow {
  company_name: string;
  email: string;
  email_verified_at: Date | null;
}

/** A developer account as the operator API shows it. */
export interface SuspensionRow {
  id: string;
  company_name: string;
  email: string;
  status: 'active' | 'suspended';
  suspended_at: Date | null;
  suspension_reason: string | null;
}

const SUSPENSION_COLUMNS = 'id, company_name, email, status, suspended_at, suspension_reason';

/** The `developers` table: provider accounts, their credentials, MFA and suspension. */
@Injectable()
export class DevelopersRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /** The new account, or null when the address (case-insensitive) already has one. */
  insertUnlessEmailTaken(
    tx: Tx,
    developer: { id: string; companyName: string; email: string; passwordHash: string },
  ): Promise<DeveloperRow | null> {
    return this.first<DeveloperRow>(
      `INSERT INTO developers (id, company_name, email, password_hash) VALUES ($1, $2, $3, $4)
       ON CONFLICT ((lower(email))) DO NOTHING
       RETURNING ${ACCOUNT_COLUMNS}`,
      [developer.id, developer.companyName, developer.email, developer.passwordHash],
      tx,
    );
  }

  async markEmailVerified(tx: Tx, developerId: string): Promise<DeveloperRow | null> {
    const { rows } = await this.changed<DeveloperRow>(
      `UPDATE developers SET email_verified_at = COALESCE(email_verified_at, now()), updated_at = now() WHERE id = $1
       RETURNING ${ACCOUNT_COLUMNS}`,
      [developerId],
      tx,
    );
    return rows[0] ?? null;
  }

  findById(developerId: string, tx?: Tx): Promise<DeveloperRow | null> {
    return this.first<DeveloperRow>(`SELECT ${ACCOUNT_COLUMNS} FROM developers WHERE id = $1`, [developerId], tx);
  }

  /** The account, locked until the end of `tx`. */
  findForUpdate(tx: Tx, developerId: string): Promise<DeveloperRow | null> {
    return this.first<DeveloperRow>(`SELECT ${ACCOUNT_COLUMNS} FROM developers WHERE id = $1 FOR UPDATE`, [developerId], tx);
  }

  async exists(developerId: string): Promise<boolean> {
    return (await this.first<{ id: string }>(`SELECT id FROM developers WHERE id = $1`, [developerId])) !== null;
  }

  findOwnerOfEmail(tx: Tx, email: string): Promise<EmailOwnerRow | null> {
    return this.first<EmailOwnerRow>(
      `SELECT company_name, email, email_verified_at FROM developers WHERE lower(email) = lower($1)`,
      [email],
      tx,
    );
  }

  /** The account with this address (case-insensitive), locked until the end of `tx`. */
  findByEmailForUpdate(tx: Tx, email: string): Promise<DeveloperRow | null> {
    return this.first<DeveloperRow>(`SELECT ${ACCOUNT_COLUMNS} FROM developers WHERE lower(email) = lower($1) FOR UPDATE`, [email], tx);
  }

  async setPasswordHash(tx: Tx, developerId: string, passwordHash: string): Promise<void> {
    await this.changed(`UPDATE developers SET password_hash = $2, updated_at = now() WHERE id = $1`, [developerId, passwordHash], tx);
  }

  /** `emailKey` is the lower-cased address. */
  findCredentials(emailKey: string): Promise<DeveloperCredentialsRow | null> {
    return this.first<DeveloperCredentialsRow>(
      `SELECT id, password_hash, status, mfa_enabled_at, mfa_secret_encrypted FROM developers WHERE lower(email) = $1`,
      [emailKey],
    );
  }

  findMfa(developerId: string): Promise<DeveloperMfaRow | null> {
    return this.first<DeveloperMfaRow>(`SELECT email, mfa_secret_encrypted, mfa_enabled_at FROM developers WHERE id = $1`, [developerId]);
  }

  async storeMfaSecret(developerId: string, sealedSecret: string): Promise<void> {
    await this.changed(`UPDATE developers SET mfa_secret_encrypted = $2, updated_at = now() WHERE id = $1`, [developerId, sealedSecret]);
  }

  /**
   * Turns MFA on with the confirming code's step counted as used (RFC 6238
   * §5.2); of concurrent confirmations one gets true.
   */
  async enableMfa(developerId: string, step: number): Promise<boolean> {
    const { rows } = await this.changed<{ id: string }>(
      `UPDATE developers SET mfa_enabled_at = now(), mfa_last_step = $2, updated_at = now() WHERE id = $1 AND mfa_enabled_at IS NULL RETURNING id`,
      [developerId, step],
    );
    return rows.length > 0;
  }

  /**
   * Accepts a code's step for a developer once (RFC 6238 §5.2): the step is
   * stored only when it is later than the last accepted one, in one conditional
   * UPDATE, so of concurrent requests with the same code, on any api instance,
   * exactly one gets true.
   */
  async claimTotpStep(developerId: string, step: number, tx?: Tx): Promise<boolean> {
    const { rows } = await this.changed<{ id: string }>(
      `UPDATE developers SET mfa_last_step = $2 WHERE id = $1 AND (mfa_last_step IS NULL OR mfa_last_step < $2) RETURNING id`,
      [developerId, step],
      tx,
    );
    return rows.length === 1;
  }

  /** The suspended account, or null when it is unknown or already suspended. */
  async suspend(tx: Tx, developerId: string, reason: string): Promise<SuspensionRow | null> {
    const { rows } = await this.changed<SuspensionRow>(
      `UPDATE developers SET status = 'suspended', suspended_at = now(), suspension_reason = $2, updated_at = now()
        WHERE id = $1 AND status = 'active' RETURNING ${SUSPENSION_COLUMNS}`,
      [developerId, reason],
      tx,
    );
    // Every remembered target of this instance (rare: suspensions are operator actions); other instances forget per package.
    this.forgetAfterTransaction(tx, INSTALL_TARGETS_CHANNEL, null);
    return rows[0] ?? null;
  }

  /** The reinstated account, or null when it is unknown or not suspended. */
  async reinstate(tx: Tx, developerId: string): Promise<SuspensionRow | null> {
    const { rows } = await this.changed<SuspensionRow>(
      `UPDATE developers SET status = 'active', suspended_at = NULL, suspension_reason = NULL, updated_at = now()
        WHERE id = $1 AND status = 'suspended' RETURNING ${SUSPENSION_COLUMNS}`,
      [developerId],
      tx,
    );
    this.forgetAfterTransaction(tx, INSTALL_TARGETS_CHANNEL, null);
    return rows[0] ?? null;
  }
}
