import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { authenticator } from 'otplib';
import { RateLimiterAbstract } from 'rate-limiter-flexible';
import { DataSource } from 'typeorm';
import { SecretBox } from '../../common/crypto/secret-box';
import { ProblemError } from '../../common/errors/problem-error';
import { newId } from '../../common/ids';
import { RateLimits } from '../../common/rate-limit/rate-limits.service';
import { PlatformTokens } from './auth/platform-tokens';
import { DeveloperLoginDto, DeveloperTokenDto } from './dto/account.dto';
import { verifyPassword } from './secrets';

/** Failed attempts allowed per email address (and, more loosely, per client address) per 15 minutes. */
const FAILURES_PER_EMAIL = 5;
const FAILURES_PER_ADDRESS = 50;
const FAILURE_WINDOW_SECONDS = 900;

/**
 * Developer console login. Unknown email and wrong password take the same time
 * and get the same answer; repeated failures for an email (known or not) lock
 * it for the rest of the window, so guessing gains nothing and reveals nothing.
 */
@Injectable()
export class DeveloperAuth {
  private readonly perEmail: RateLimiterAbstract;
  private readonly perAddress: RateLimiterAbstract;

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly tokens: PlatformTokens,
    private readonly secretBox: SecretBox,
    limits: RateLimits,
  ) {
    this.perEmail = limits.limiter('login-fail-email', FAILURES_PER_EMAIL, FAILURE_WINDOW_SECONDS);
    this.perAddress = limits.limiter('login-fail-addr', FAILURES_PER_ADDRESS, FAILURE_WINDOW_SECONDS);
  }

  async login(input: DeveloperLoginDto, address: string): Promise<DeveloperTokenDto> {
    const emailKey = input.email.trim().toLowerCase();
    await this.refuseWhenLocked(emailKey, address);

    const [developer]: Array<{
      id: string;
      password_hash: string;
      status: string;
      mfa_enabled_at: Date | null;
      mfa_secret_encrypted: string | null;
    }> = await this.dataSource.query(
      `SELECT id, password_hash, status, mfa_enabled_at, mfa_secret_encrypted FROM developers WHERE lower(email) = $1`,
      [emailKey],
    );
    const passwordOk = await verifyPassword(developer?.password_hash ?? null, input.password);
    if (!developer || !passwordOk) {
      await this.recordFailure(emailKey, address);
      throw new ProblemError('invalid_credentials', 'The email address or password is not correct');
    }
    if (developer.mfa_enabled_at) {
      if (!input.totp) throw new ProblemError('mfa_required', 'This account uses two-factor authentication: send the current code as totp');
      if (!authenticator.check(input.totp, this.secretBox.open(developer.mfa_secret_encrypted!))) {
        await this.recordFailure(emailKey, address);
        throw new ProblemError('mfa_required', 'The two-factor code is not correct', { field: 'totp' });
      }
    }
    if (developer.status === 'suspended')
      throw new ProblemError('account_suspended', 'This developer account is suspended; contact support');
    await this.perEmail.delete(emailKey);

    const expiresAt = new Date(Date.now() + this.tokens.ttlSeconds * 1000);
    const sessionId = newId('ses');
    await this.dataSource.query(`INSERT INTO developer_sessions (id, developer_id, expires_at) VALUES ($1, $2, $3)`, [
      sessionId,
      developer.id,
      expiresAt,
    ]);
    return {
      token: await this.tokens.forDeveloper(developer.id, sessionId, expiresAt),
      token_type: 'Bearer',
      expires_at: expiresAt.toISOString(),
    };
  }

  async logout(sessionId: string): Promise<void> {
    await this.dataSource.query(`UPDATE developer_sessions SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [sessionId]);
  }

  private async refuseWhenLocked(emailKey: string, address: string): Promise<void> {
    const [email, client] = await Promise.all([this.perEmail.get(emailKey), this.perAddress.get(address)]);
    const blocked = [email, client].filter((r) => r !== null && r.remainingPoints <= 0);
    if (blocked.length > 0) {
      const retry = Math.max(...blocked.map((r) => Math.ceil(r!.msBeforeNext / 1000)), 1);
      throw new ProblemError(
        'rate_limit_exceeded',
        `Too many failed logins; retry in ${retry} seconds`,
        {},
        { 'Retry-After': String(retry) },
      );
    }
  }

  private async recordFailure(emailKey: string, address: string): Promise<void> {
    // Consuming past zero rejects; the lock is what refuseWhenLocked reads next time.
    await Promise.allSettled([this.perEmail.consume(emailKey), this.perAddress.consume(address)]);
  }
}
