import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { authenticator } from 'otplib';
import { RateLimiterRes } from 'rate-limiter-flexible';
import { DataSource } from 'typeorm';
import { SecretBox } from '../../common/crypto/secret-box';
import { ProblemError } from '../../common/errors/problem-error';
import { newId } from '../../common/ids';
import { RateLimits } from '../../common/rate-limit/rate-limits.service';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import type { Tx } from '../../infra/database/sql-repository';
import { MailOutbox } from '../../infra/mail/mail-outbox';
import { matchingTotpStep } from './developer-totp';
import { DeveloperRow, DevelopersRepository } from './developers.repository';
import { AccountDto, AccountRequestedDto, CreateAccountDto } from './dto/account.dto';
import { EmailVerificationsRepository } from './email-verifications.repository';
import { hashPassword, hashToken, newSecret } from './secrets';

export const VERIFICATION_LIFETIME_HOURS = 24;
const MFA_ISSUER = 'Service';

export function toAccountDto(row: DeveloperRow): AccountDto {
  return {
    id: row.id,
    company_name: row.company_name,
    email: row.email,
    email_verified: row.email_verified_at !== null,
    email_verified_at: row.email_verified_at?.toISOString() ?? null,
    mfa_enabled: row.mfa_enabled_at !== null,
    status: row.status,
    created_at: row.created_at.toISOString(),
  };
}

/**
 * What a new password must meet beyond its length (12 to 256 characters, checked
 * by the DTOs): at sign-up and at a password reset alike.
 */
export function checkPasswordRules(password: string, email: string): void {
  const lower = password.toLowerCase();
  if (lower.includes(email.toLowerCase()) || lower === email.split('@')[0].toLowerCase()) {
    throw new ProblemError('invalid_format', 'password must not contain the email address', { field: 'password' });
  }
}

/** Onboarding steps one and two: the developer account and its email verification; MFA enrolment. */
@Injectable()
export class DeveloperAccounts {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly mail: MailOutbox,
    private readonly secretBox: SecretBox,
    private readonly limits: RateLimits,
    private readonly developers: DevelopersRepository,
    private readonly verifications: EmailVerificationsRepository,
  ) {}

  /**
   * Answers the same whether or not the address already has an account
   * (OWASP Authentication Cheat Sheet, account creation), after the same
   * argon2 hash: a new address gets the verification link, a taken one a
   * notice to its owner. Only the mailbox's owner learns which happened.
   */
  async create(input: CreateAccountDto): Promise<AccountRequestedDto> {
    const email = input.email.trim();
    checkPasswordRules(input.password, email);
    const passwordHash = await hashPassword(input.password);
    await this.dataSource.transaction(async (manager) => {
      const created = await this.developers.insertUnlessEmailTaken(manager, {
        id: newId('dev'),
        companyName: input.company_name.trim(),
        email,
        passwordHash,
      });
      if (created) await this.sendVerification(manager, created);
      else await this.sendSignUpNotice(manager, email);
    });
    return {
      email,
      message: `We sent a message to ${email}. If the address is new here, it holds a link to verify it (valid for ${VERIFICATION_LIFETIME_HOURS} hours); if it already has an account, it explains how to log in.`,
    };
  }

  async verify(token: string): Promise<AccountDto> {
    return this.dataSource.transaction(async (manager) => {
      const link = await this.verifications.findForUpdate(manager, hashToken(token));
      if (!link) throw new ProblemError('bad_request', 'This verification token is unknown; request a new link', { field: 'token' });
      if (link.used_at) throw new ProblemError('bad_request', 'This verification link was already used', { field: 'token' });
      if (link.invalidated_at)
        throw new ProblemError('bad_request', 'This verification link was replaced by a newer one; use the latest email', {
          field: 'token',
        });
      if (link.expired)
        throw new ProblemError(
          'bad_request',
          `This verification link expired (links are valid for ${VERIFICATION_LIFETIME_HOURS} hours); request a new one`,
          { field: 'token' },
        );
      await this.verifications.markUsed(manager, link.id);
      return toAccountDto((await this.developers.markEmailVerified(manager, link.developer_id))!);
    });
  }

  /** Sends a new link and invalidates the earlier ones; at most one per minute and five per day. */
  async resend(developerId: string): Promise<{ sent: true }> {
    for (const [points, duration] of [
      [1, 60],
      [5, 86_400],
    ]) {
      try {
        await this.limits.limiter('verify-resend', points, duration).consume(developerId);
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        const retry = Math.max(1, Math.ceil(rejection.msBeforeNext / 1000));
        throw new ProblemError(
          'rate_limit_exceeded',
          `A verification link was sent recently; retry in ${retry} seconds`,
          {},
          { 'Retry-After': String(retry) },
        );
      }
    }
    await this.dataSource.transaction(async (manager) => {
      const row = (await this.developers.findForUpdate(manager, developerId))!;
      if (row.email_verified_at) throw new ProblemError('conflict', 'The email address is already verified');
      await this.verifications.invalidateOpen(manager, developerId);
      await this.sendVerification(manager, row);
    });
    return { sent: true };
  }

  async get(developerId: string): Promise<AccountDto> {
    return toAccountDto((await this.developers.findById(developerId))!);
  }

  /** Starts TOTP enrolment: a new secret, shown once, inactive until confirmed with a code. */
  async enrolMfa(developerId: string): Promise<{ secret: string; otpauth_uri: string }> {
    const row = (await this.developers.findMfa(developerId))!;
    if (row.mfa_enabled_at) throw new ProblemError('conflict', 'MFA is already enabled on this account');
    const secret = authenticator.generateSecret(20);
    await this.developers.storeMfaSecret(developerId, this.secretBox.seal(secret));
    return { secret, otpauth_uri: authenticator.keyuri(row.email, MFA_ISSUER, secret) };
  }

  async confirmMfa(developerId: string, code: string): Promise<AccountDto> {
    const row = (await this.developers.findMfa(developerId))!;
    if (row.mfa_enabled_at) throw new ProblemError('conflict', 'MFA is already enabled on this account');
    if (!row.mfa_secret_encrypted) throw new ProblemError('bad_request', 'Start enrolment first with POST /v1/providers/account/mfa');
    const step = matchingTotpStep(this.secretBox.open(row.mfa_secret_encrypted), code);
    if (step === null) {
      throw new ProblemError('invalid_format', 'The code does not match; check the device clock and try the current code', {
        field: 'code',
      });
    }
    // The confirming code counts as used, so it cannot log in afterwards (RFC 6238 §5.2); of concurrent confirmations one enables.
    if (!(await this.developers.enableMfa(developerId, step))) throw new ProblemError('conflict', 'MFA is already enabled on this account');
    return this.get(developerId);
  }

  /**
   * Tells the owner of a taken address about the attempt, instead of telling
   * the requester. At most one notice per address an hour, so sign-up
   * attempts cannot be used to flood someone's mailbox.
   */
  private async sendSignUpNotice(manager: Tx, email: string): Promise<void> {
    const owner = await this.developers.findOwnerOfEmail(manager, email);
    if (!owner) return; // deleted meanwhile: nothing to tell
    try {
      await this.limits.limiter('signup-notice', 1, 3_600).consume(owner.email.toLowerCase());
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) return;
      throw rejection;
    }
    const login = `${this.config.publicBaseUrl}/console/login`;
    const reset = `${this.config.publicBaseUrl}/console/forgot-password`;
    await this.mail.enqueue(manager, {
      to: owner.email,
      subject: 'Sign-up attempt with your email address',
      text: [
        `Hello ${owner.company_name},`,
        '',
        'Someone, perhaps you, just tried to create a developer account with this email address, which already has one. Nothing was changed.',
        '',
        'If it was you, log in instead:',
        login,
        '',
        'If you no longer know the password, reset it here (the API route is POST /v1/providers/account/password/reset):',
        reset,
        ...(owner.email_verified_at
          ? []
          : ['', 'The address is not verified yet: once logged in, send yourself a new verification link from your account page.']),
        '',
        'If it was not you, you can ignore this message: the account cannot be used without its password.',
      ].join('\n'),
    });
  }

  private async sendVerification(manager: Tx, developer: DeveloperRow): Promise<void> {
    const token = newSecret('vt');
    await this.verifications.insert(manager, {
      id: newId('task'),
      developerId: developer.id,
      tokenHash: hashToken(token),
      lifetimeHours: VERIFICATION_LIFETIME_HOURS,
    });
    const link = `${this.config.publicBaseUrl}/console/verify-email?token=${encodeURIComponent(token)}`;
    await this.mail.enqueue(manager, {
      to: developer.email,
      subject: 'Verify your developer account email',
      text: [
        `Hello ${developer.company_name},`,
        '',
        'Confirm this email address to start registering apps:',
        link,
        '',
        `The link works once and expires in ${VERIFICATION_LIFETIME_HOURS} hours. If you did not create an account, ignore this message.`,
      ].join('\n'),
    });
  }
}
