import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { DataSource } from 'typeorm';
import { ProblemError } from '../../common/errors/problem-error';
import { newId } from '../../common/ids';
import { RateLimits } from '../../common/rate-limit/rate-limits.service';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import type { Tx } from '../../infra/database/sql-repository';
import { MailOutbox } from '../../infra/mail/mail-outbox';
import { JobOutbox } from '../../infra/queue/job-outbox';
import { checkPasswordRules } from './developer-accounts.service';
import { DeveloperSessionsRepository } from './developer-sessions.repository';
import { DeveloperRow, DevelopersRepository } from './developers.repository';
import { PasswordResetConfirmDto, PasswordResetDoneDto, PasswordResetRequestDto, PasswordResetRequestedDto } from './dto/account.dto';
import { passwordResetJob } from './password-resets.queue';
import { PasswordResetsRepository } from './password-resets.repository';
import { hashPassword, hashToken, newSecret } from './secrets';

export const RESET_LIFETIME_MINUTES = 60;
/** Reset requests allowed per email address (known or not) and per client address in an hour. */
export const RESETS_PER_EMAIL = 5;
export const RESETS_PER_ADDRESS = 20;
const RESET_WINDOW_SECONDS = 3_600;

/**
 * Developer password reset (issue 24). The request answers the same whether
 * or not the address has an account, and is counted per email and per client
 * address before anything is looked up (so the limit cannot tell them apart
 * either); the lookup and the link happen on the worker, never inline. The link
 * is single use, valid one hour, stored as a hash; a newer request replaces
 * the older links. Confirming it sets the new password and, in the same
 * transaction, ends every console session of the account.
 */
@Injectable()
export class PasswordResets {
  private readonly perEmail: RateLimiterAbstract;
  private readonly perAddress: RateLimiterAbstract;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly mail: MailOutbox,
    private readonly developers: DevelopersRepository,
    private readonly sessions: DeveloperSessionsRepository,
    private readonly resets: PasswordResetsRepository,
    private readonly jobs: JobOutbox,
    limits: RateLimits,
  ) {
    this.perEmail = limits.limiter('reset-email', RESETS_PER_EMAIL, RESET_WINDOW_SECONDS);
    this.perAddress = limits.limiter('reset-addr', RESETS_PER_ADDRESS, RESET_WINDOW_SECONDS);
  }

  /**
   * Records one job, whoever the address belongs to: the answer does the same
   * work, and so takes the same time, for a known, an unknown and a suspended
   * address. The worker looks the address up (`sendLink`).
   */
  async request(input: PasswordResetRequestDto, address: string): Promise<PasswordResetRequestedDto> {
    const email = input.email.trim();
    await this.spendRequest(email.toLowerCase(), address);
    await this.dataSource.transaction((tx) => this.jobs.record(tx, passwordResetJob(newId('task'), email)));
    return {
      email,
      message: `If ${email} belongs to a developer account, we sent it a link to choose a new password. The link works once and expires in ${RESET_LIFETIME_MINUTES} minutes; a newer request replaces it.`,
    };
  }

  /**
   * One transaction: the link (locked, so of concurrent confirmations one
   * wins and the others find it used), the account (locked), the new argon2id
   * hash, the link marked used with the account's other open links, and every
   * console session ended. A refused confirmation changes nothing and leaves
   * a valid link usable.
   */
  async confirm(input: PasswordResetConfirmDto): Promise<PasswordResetDoneDto> {
    return this.dataSource.transaction(async (tx) => {
      const link = await this.resets.findForUpdate(tx, hashToken(input.token));
      if (!link) throw invalidLink('This reset link is unknown; request a new one');
      if (link.used_at) throw invalidLink('This reset link was already used; request a new one if you need to');
      if (link.invalidated_at) throw invalidLink('This reset link was replaced by a newer one; use the link in the latest email');
      if (link.expired)
        throw invalidLink(`This reset link expired (links are valid for ${RESET_LIFETIME_MINUTES} minutes); request a new one`);

      const developer = (await this.developers.findForUpdate(tx, link.developer_id))!;
      if (developer.status !== 'active')
        throw new ProblemError('account_suspended', 'This developer account is suspended; contact support');
      checkPasswordRules(input.password, developer.email);

      await this.developers.setPasswordHash(tx, developer.id, await hashPassword(input.password));
      if (!(await this.resets.markUsed(tx, link.id)))
        throw invalidLink('This reset link was already used; request a new one if you need to');
      await this.resets.invalidateOpen(tx, developer.id);
      await this.sessions.revokeAllForDeveloper(tx, developer.id);
      // The link reached the mailbox, which is what a verification link proves.
      await this.developers.markEmailVerified(tx, developer.id);
      await this.sendChangedNotice(tx, developer);
      return {
        email: developer.email,
        message: 'Your password is changed and every console session of the account is signed out. Log in with the new password.',
      };
    });
  }

  /**
   * Counts the request for the email and the client address before anything
   * is looked up; either spent refuses it (and it stays counted).
   */
  private async spendRequest(emailKey: string, address: string): Promise<void> {
    const outcomes = await Promise.allSettled([this.perEmail.consume(emailKey), this.perAddress.consume(address)]);
    const refusals: RateLimiterRes[] = [];
    for (const outcome of outcomes) {
      if (outcome.status === 'fulfilled') continue;
      if (!(outcome.reason instanceof RateLimiterRes)) throw outcome.reason;
      refusals.push(outcome.reason);
    }
    if (refusals.length === 0) return;
    const retry = Math.max(...refusals.map((r) => Math.ceil(r.msBeforeNext / 1000)), 1);
    throw new ProblemError(
      'rate_limit_exceeded',
      `Too many password reset requests; retry in ${retry} seconds`,
      {},
      { 'Retry-After': String(retry) },
    );
  }

  /**
   * The queued half of a request: an active account at `email` gets a new link
   * (its earlier open links end) by mail; anything else gets nothing. The link's
   * id is the job's, so a retry of a job whose transaction committed finds its
   * link and sends nothing twice.
   */
  async sendLink(jobId: string, email: string): Promise<'sent' | 'no_account' | 'already_sent'> {
    return this.dataSource.transaction(async (tx) => {
      // Locked, so links of concurrent requests are created one after the other and only the newest stays open.
      const developer = await this.developers.findByEmailForUpdate(tx, email);
      // A suspended account gets no link: a reset must not be a way back in.
      if (!developer || developer.status !== 'active') return 'no_account';
      const token = newSecret('prt');
      const inserted = await this.resets.insertUnlessExists(tx, {
        id: jobId,
        developerId: developer.id,
        tokenHash: hashToken(token),
        lifetimeMinutes: RESET_LIFETIME_MINUTES,
      });
      if (!inserted) return 'already_sent';
      await this.resets.invalidateOpen(tx, developer.id, jobId);
      await this.mailLink(tx, developer, token);
      return 'sent';
    });
  }

  private async mailLink(tx: Tx, developer: DeveloperRow, token: string): Promise<void> {
    const link = `${this.config.publicBaseUrl}/console/reset-password?token=${encodeURIComponent(token)}`;
    await this.mail.enqueue(tx, {
      to: developer.email,
      subject: 'Reset your developer account password',
      text: [
        `Hello ${developer.company_name},`,
        '',
        'Someone, perhaps you, asked to reset the password of your developer account. Choose a new password here:',
        link,
        '',
        `The link works once and expires in ${RESET_LIFETIME_MINUTES} minutes; a newer request replaces it. Setting a new password signs out every console session of the account.`,
        '',
        'If you did not ask for this, ignore this message: your password stays as it is.',
      ].join('\n'),
    });
  }

  private async sendChangedNotice(tx: Tx, developer: DeveloperRow): Promise<void> {
    await this.mail.enqueue(tx, {
      to: developer.email,
      subject: 'Your developer account password was changed',
      text: [
        `Hello ${developer.company_name},`,
        '',
        'The password of your developer account was just changed with a reset link, and every console session was signed out.',
        "Your apps' client secrets and tokens were not changed: if you think someone else had access to the console, rotate them there.",
        '',
        `If you did not do this, reset the password again at ${this.config.publicBaseUrl}/console/forgot-password and contact support.`,
      ].join('\n'),
    });
  }
}

function invalidLink(detail: string): ProblemError {
  return new ProblemError('invalid_reset_token', detail, { field: 'token' });
}
