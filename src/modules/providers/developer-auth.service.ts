import { Injectable } from '@nestjs/common';
import { RateLimiterAbstract, RateLimiterRes } from 'rate-limiter-flexible';
import { SecretBox } from '../../common/crypto/secret-box';
import { ProblemError } from '../../common/errors/problem-error';
import { newId } from '../../common/ids';
import { RateLimits } from '../../common/rate-limit/rate-limits.service';
import { PlatformTokens } from './auth/platform-tokens';
import { DeveloperSessionsRepository } from './developer-sessions.repository';
import { matchingTotpStep } from './developer-totp';
import { DevelopersRepository } from './developers.repository';
import { DeveloperLoginDto, DeveloperTokenDto } from './dto/account.dto';
import { verifyPassword } from './secrets';

/** Login attempts allowed per email address (known or not) and per client address in 15 minutes. */
const ATTEMPTS_PER_EMAIL = 5;
const ATTEMPTS_PER_ADDRESS = 50;
const ATTEMPT_WINDOW_SECONDS = 900;

/**
 * Developer console login. Unknown email and wrong password take the same time
 * and get the same answer. Every attempt is counted in Redis before its
 * password or code is checked, so however many arrive at once, on however
 * many api instances, at most five per email address (whatever the client
 * address) and fifty per client address (whatever the email) are ever checked
 * in a window; the rest answer 429 before any check. An attempt whose
 * credentials turn out right gives back the one attempt it spent, and only
 * that one: wrong ones stay counted, so a success never reopens a lock.
 */
@Injectable()
export class DeveloperAuth {
  private readonly perEmail: RateLimiterAbstract;
  private readonly perAddress: RateLimiterAbstract;

  constructor(
    private readonly developers: DevelopersRepository,
    private readonly sessions: DeveloperSessionsRepository,
    private readonly tokens: PlatformTokens,
    private readonly secretBox: SecretBox,
    limits: RateLimits,
  ) {
    this.perEmail = limits.limiter('login-email', ATTEMPTS_PER_EMAIL, ATTEMPT_WINDOW_SECONDS);
    this.perAddress = limits.limiter('login-addr', ATTEMPTS_PER_ADDRESS, ATTEMPT_WINDOW_SECONDS);
  }

  async login(input: DeveloperLoginDto, address: string): Promise<DeveloperTokenDto> {
    const emailKey = input.email.trim().toLowerCase();
    await this.spendAttempt(emailKey, address);

    const developer = await this.developers.findCredentials(emailKey);
    const passwordOk = await verifyPassword(developer?.password_hash ?? null, input.password);
    if (!developer || !passwordOk) throw new ProblemError('invalid_credentials', 'The email address or password is not correct');
    if (developer.mfa_enabled_at) {
      if (!input.totp) {
        // The first half of a two-step sign-in with the right password: not a guess.
        await this.giveBackAttempt(emailKey, address);
        throw new ProblemError('mfa_required', 'This account uses two-factor authentication: send the current code as totp');
      }
      const step = matchingTotpStep(this.secretBox.open(developer.mfa_secret_encrypted!), input.totp);
      if (step === null) throw new ProblemError('mfa_required', 'The two-factor code is not correct', { field: 'totp' });
      if (!(await this.developers.claimTotpStep(developer.id, step)))
        throw new ProblemError('mfa_required', 'This two-factor code was already used; wait for the next code', { field: 'totp' });
    }
    await this.giveBackAttempt(emailKey, address);
    if (developer.status === 'suspended')
      throw new ProblemError('account_suspended', 'This developer account is suspended; contact support');

    const expiresAt = new Date(Date.now() + this.tokens.ttlSeconds * 1000);
    const sessionId = newId('ses');
    await this.sessions.insert({ id: sessionId, developerId: developer.id, expiresAt });
    return {
      token: await this.tokens.forDeveloper(developer.id, sessionId, expiresAt),
      token_type: 'Bearer',
      expires_at: expiresAt.toISOString(),
    };
  }

  async logout(sessionId: string): Promise<void> {
    await this.sessions.revoke(sessionId);
  }

  /**
   * Counts the attempt for the email and the client address (one atomic
   * increment each in Redis) and refuses it when either is spent. A refused
   * attempt still counts, so hammering a locked account gains nothing.
   */
  private async spendAttempt(emailKey: string, address: string): Promise<void> {
    const outcomes = await Promise.allSettled([this.perEmail.consume(emailKey), this.perAddress.consume(address)]);
    const refusals: RateLimiterRes[] = [];
    for (const outcome of outcomes) {
      if (outcome.status === 'fulfilled') continue;
      if (!(outcome.reason instanceof RateLimiterRes)) throw outcome.reason;
      refusals.push(outcome.reason);
    }
    if (refusals.length > 0) {
      const retry = Math.max(...refusals.map((r) => Math.ceil(r.msBeforeNext / 1000)), 1);
      throw new ProblemError(
        'rate_limit_exceeded',
        `Too many login attempts; retry in ${retry} seconds`,
        {},
        { 'Retry-After': String(retry) },
      );
    }
  }

  /** Returns the one attempt that a request with the right credentials spent; earlier attempts stay counted. */
  private async giveBackAttempt(emailKey: string, address: string): Promise<void> {
    // Best effort: failing to give an attempt back must not fail a correct login.
    await Promise.allSettled([this.perEmail.reward(emailKey, 1), this.perAddress.reward(address, 1)]);
  }
}
