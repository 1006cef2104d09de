import { DataSource } from 'typeorm';
import { newId } from '../../src/common/ids';
import { INSTALL_TARGETS_CHANNEL } from '../../src/infra/database/change-channels';
import { NotifiedCache } from '../../src/infra/database/notified-cache';

/**
 * Rows and states for tests to start from, so that a test's arrange step reads
 * as what it sets up rather than as SQL (as immich's `test/medium` factories).
 *
 * Use the public API where the set-up is something a user, developer or
 * operator does (log in, add a contact, publish a package); use these where
 * the state cannot be reached through it: old timestamps, expired tokens, a
 * row committed without its job, a user deleted outside the service. Each
 * builder takes overrides over sensible defaults and answers the ids a test
 * needs. Intervals are PostgreSQL intervals (`'30 days'`, `'5 days 1 minute'`).
 *
 * Reading the database to check an outcome is not set-up and stays in the test.
 */
export function factories(dataSource: DataSource): Factories {
  return new Factories(dataSource);
}

export type Tier = 'free' | 'pro' | 'enterprise';

export class Factories {
  constructor(private readonly dataSource: DataSource) {}

  private async run(sql: string, params: unknown[] = []): Promise<void> {
    await this.dataSource.query(sql, params);
  }

  // users (auth) ------------------------------------------------------------

  /** A user as a first login leaves it, without a session or soul; `verifiedEmail` as a login with a verified address sets it. */
  async user(
    overrides: { id?: string; idpSubject?: string; name?: string; email?: string | null; verifiedEmail?: string | null; tier?: Tier } = {},
  ): Promise<{ id: string }> {
    const id = overrides.id ?? newId('usr');
    await this.run(`INSERT INTO users (id, idp_subject, name, email, verified_email, tier) VALUES ($1, $2, $3, $4, $5, $6)`, [
      id,
      overrides.idpSubject ?? `uid-${id}`,
      overrides.name ?? 'Test User',
      overrides.email === undefined ? `${id.toLowerCase()}@example.com` : overrides.email,
      overrides.verifiedEmail?.toLowerCase() ?? null,
      overrides.tier ?? 'free',
    ]);
    return { id };
  }

  /** Moves a user to a tier directly (the operator API does the same with `PATCH /v1/operator/users/:id`). */
  async tier(userId: string, tier: Tier): Promise<void> {
    await this.run(`UPDATE users SET tier = $2 WHERE id = $1`, [userId, tier]);
  }

  /** Deletes a user outside the service, as an operator in psql would: no event, no API call. */
  async deleteUserOutsideService(userId: string): Promise<void> {
    await this.run(`DELETE FROM users WHERE id = $1`, [userId]);
  }

  /** Removes a user's soul row outside the service (the traits are gone; nothing else is). */
  async deleteSoulOutsideService(userId: string): Promise<void> {
    await this.run(`DELETE FROM souls WHERE user_id = $1`, [userId]);
  }

  // contacts and messages -----------------------------------------------------

  /**
   * A contact of `userId`, optionally with an interaction weight as of `weightAgo`. It reaches (links to)
   * the user whose verified address equals `email`, as one added through the API does.
   */
  async contact(
    userId: string,
    overrides: { id?: string; name?: string; email?: string | null; weight?: number; weightAgo?: string } = {},
  ): Promise<{ id: string }> {
    const id = overrides.id ?? newId('con');
    const weighted = overrides.weight !== undefined;
    await this.run(
      `INSERT INTO contacts (id, user_id, name, email, interaction_weight, weight_at, last_interaction)
       VALUES ($1, $2, $3, $4, $5, CASE WHEN $6::boolean THEN now() - $7::interval END, CASE WHEN $6::boolean THEN now() - $7::interval END)`,
      [
        id,
        userId,
        overrides.name ?? 'Test Contact',
        overrides.email ?? null,
        overrides.weight ?? 0,
        weighted,
        overrides.weightAgo ?? '0 seconds',
      ],
    );
    return { id };
  }

  /** Pretends a contact's last interactions happened `interval` earlier than they did (the weight then decays). */
  async ageContactInteractions(contactId: string, interval: string): Promise<void> {
    await this.run(`UPDATE contacts SET weight_at = weight_at - $2::interval WHERE id = $1`, [contactId, interval]);
  }

  /** Gives messages one creation time (for example to make them share a timestamp). */
  async messagesCreatedAt(messageIds: string[], at: string): Promise<void> {
    await this.run(`UPDATE messages SET created_at = $2::timestamptz WHERE id = ANY($1)`, [messageIds, at]);
  }

  // agents and exports --------------------------------------------------------

  /** An agent action row as the API records it, but without the job that runs it (see `outboxJob`). */
  async agentAction(
    userId: string,
    overrides: { id?: string; action?: string; params?: Record<string, unknown>; status?: string } = {},
  ): Promise<{ id: string }> {
    const id = overrides.id ?? newId('act');
    await this.run(`INSERT INTO agent_actions (id, user_id, action, params, status) VALUES ($1, $2, $3, $4, $5)`, [
      id,
      userId,
      overrides.action ?? 'draft_email',
      JSON.stringify(overrides.params ?? {}),
      overrides.status ?? 'queued',
    ]);
    return { id };
  }

  /** A pending export without a job, created `createdAgo` ago and expiring in a day. */
  async pendingExport(userId: string, overrides: { id?: string; createdAgo?: string; format?: string } = {}): Promise<{ id: string }> {
    const id = overrides.id ?? newId('exp');
    await this.run(
      `INSERT INTO exports (id, user_id, format, created_at, expires_at) VALUES ($1, $2, $3, now() - $4::interval, now() + interval '1 day')`,
      [id, userId, overrides.format ?? 'json', overrides.createdAgo ?? '0 seconds'],
    );
    return { id };
  }

  /** Moves an export's expiry `ago` into the past. */
  async expireExport(exportId: string, ago: string): Promise<void> {
    await this.run(`UPDATE exports SET expires_at = now() - $2::interval WHERE id = $1`, [exportId, ago]);
  }

  // backbone: job outbox, events, mail -------------------------------------------

  /**
   * A job recorded in the outbox but not (yet) relayed to BullMQ, as when Redis refused it at the time;
   * `relayedAgo` records it as relayed instead.
   */
  async outboxJob(job: {
    id?: string;
    queue: string;
    name: string;
    data?: Record<string, unknown>;
    createdAgo?: string;
    relayedAgo?: string;
  }): Promise<{ id: string }> {
    const id = job.id ?? newId('job');
    await this.run(
      `INSERT INTO job_outbox (id, queue, name, data, created_at, relayed_at)
       VALUES ($1, $2, $3, $4, now() - $5::interval, now() - $6::interval)`,
      [id, job.queue, job.name, JSON.stringify(job.data ?? {}), job.createdAgo ?? '0 seconds', job.relayedAgo ?? null],
    );
    return { id };
  }

  /** Removes jobs from the outbox (clean-up after a test that planted some). */
  async removeJobs(ids: string[]): Promise<void> {
    await this.run(`DELETE FROM job_outbox WHERE id = ANY($1)`, [ids]);
  }

  /**
   * A committed domain event. Undispatched and available at its creation unless told otherwise
   * (`dispatchedAgo: '0 seconds'` records it as dispatched now).
   */
  async event(event: {
    id?: string;
    type: string;
    payload?: Record<string, unknown>;
    createdAgo?: string;
    dispatchedAgo?: string;
  }): Promise<{ id: string }> {
    const id = event.id ?? newId('evt');
    await this.run(
      `INSERT INTO events (id, type, payload, created_at, available_at, dispatched_at)
       VALUES ($1, $2, $3, now() - $4::interval, now() - $4::interval, now() - $5::interval)`,
      [id, event.type, JSON.stringify(event.payload ?? {}), event.createdAgo ?? '0 seconds', event.dispatchedAgo ?? null],
    );
    return { id };
  }

  /** Removes events (clean-up after a test that planted some). */
  async removeEvents(ids: string[]): Promise<void> {
    await this.run(`DELETE FROM events WHERE id = ANY($1)`, [ids]);
  }

  /**
   * `count` committed `install.created` events for one app in one statement, as other areas record them
   * (one transaction), with ids `evt_fault0000000000001` …; answers the ids in order.
   */
  async installCreatedEvents(appId: string, count: number): Promise<string[]> {
    const rows: Array<{ id: string }> = await this.dataSource.query(
      `INSERT INTO events (id, type, payload)
       SELECT 'evt_fault' || lpad(i::text, 13, '0'), 'install.created',
              jsonb_build_object('app_id', $1::text, 'data', jsonb_build_object('install_id', 'inst_' || i, 'user_id', 'usr_x', 'package_id', 'pkg_x', 'version', '1.0.0', 'scopes_granted', '[]'::jsonb))
         FROM generate_series(1, $2::int) AS i
       RETURNING id`,
      [appId, count],
    );
    return rows.map((r) => r.id);
  }

  /** Wakes the event dispatchers, as a commit that recorded events does. */
  async wakeEventDispatchers(): Promise<void> {
    await this.run(`NOTIFY domain_events`);
  }

  /** A mail committed to the outbox without a job (`bodyEncrypted`: the body sealed with the service's SecretBox). */
  async mailWithoutJob(mail: { id?: string; to: string; subject?: string; bodyEncrypted: string }): Promise<{ id: string }> {
    const id = mail.id ?? newId('task');
    await this.run(`INSERT INTO mail_outbox (id, recipient, subject, body_encrypted) VALUES ($1, $2, $3, $4)`, [
      id,
      mail.to,
      mail.subject ?? 'hello',
      mail.bodyEncrypted,
    ]);
    return { id };
  }

  // idempotency keys -------------------------------------------------------------

  /** Moves an idempotency key's expiry `ago` into the past (its 24 hours are over). */
  async expireIdempotencyKey(ownerId: string, scope: string, key: string, ago = '1 second'): Promise<void> {
    await this.run(`UPDATE idempotency_keys SET expires_at = now() - $4::interval WHERE owner_id = $1 AND scope = $2 AND key = $3`, [
      ownerId,
      scope,
      key,
      ago,
    ]);
  }

  // providers, packages, webhooks -------------------------------------------------

  /** A verified, active developer account (its password hash is not a usable one: log in through the API instead). */
  async developer(overrides: { id?: string; email?: string; companyName?: string } = {}): Promise<{ id: string }> {
    const id = overrides.id ?? newId('dev');
    await this.run(
      `INSERT INTO developers (id, company_name, email, password_hash, email_verified_at) VALUES ($1, $2, $3, 'not-a-password-hash', now())`,
      [id, overrides.companyName ?? 'Acme Tools', overrides.email ?? `${id.toLowerCase()}@developer.example`],
    );
    return { id };
  }

  /** A registered app of a developer holding `scopes` (its client secret hash matches no secret). */
  async app(developerId: string, overrides: { id?: string; name?: string; scopes?: string[] } = {}): Promise<{ id: string }> {
    const id = overrides.id ?? newId('app');
    await this.run(
      `INSERT INTO apps (id, developer_id, name, scopes, client_id, client_secret_hash) VALUES ($1, $2, $3, $4, $5, 'not-a-secret-hash')`,
      [id, developerId, overrides.name ?? 'Acme Calendar', overrides.scopes ?? ['capabilities:execute'], `client_${id}`],
    );
    return { id };
  }

  /**
   * A package with one published version (as review and publish leave it), with its developer and app unless given:
   * what a marketplace, install or bridge test needs without going through conformance and review.
   */
  async publishedPackage(
    overrides: {
      developerId?: string;
      appId?: string;
      appScopes?: string[];
      slug?: string;
      name?: string;
      riskTier?: 'data_only' | 'action_capable' | 'high_trust' | 'strategic_surface';
      version?: string;
      capabilities?: unknown[];
      runtimeUrl?: string;
    } = {},
  ): Promise<{ id: string; slug: string; appId: string; developerId: string; versionId: string }> {
    const developerId = overrides.developerId ?? (await this.developer()).id;
    const appId = overrides.appId ?? (await this.app(developerId, { scopes: overrides.appScopes })).id;
    const id = newId('pkg');
    const slug = overrides.slug ?? `pkg-${id.slice(4, 14).toLowerCase()}`;
    await this.run(
      `INSERT INTO packages (id, app_id, developer_id, name, slug, description, risk_tier) VALUES ($1, $2, $3, $4, $5, 'A test package', $6)`,
      [id, appId, developerId, overrides.name ?? 'Test Package', slug, overrides.riskTier ?? 'data_only'],
    );
    const { versionId } = await this.publishVersion(id, {
      version: overrides.version,
      capabilities: overrides.capabilities,
      runtimeUrl: overrides.runtimeUrl,
    });
    return { id, slug, appId, developerId, versionId };
  }

  /**
   * Publishes a new version of a package directly: the previous published version is superseded and the package
   * points at the new one. Unlike a publish through the API, active installs are NOT moved (the state a
   * publish leaves installs in is the packages area's to make): they stay on the version they have.
   */
  async publishVersion(
    packageId: string,
    overrides: { version?: string; capabilities?: unknown[]; runtimeUrl?: string } = {},
  ): Promise<{ versionId: string }> {
    const versionId = newId('ver');
    const version = overrides.version ?? '1.0.0';
    const [major, minor, patch] = version.split('.').map(Number);
    await this.dataSource.transaction(async (tx) => {
      await tx.query(`UPDATE package_versions SET state = 'superseded' WHERE package_id = $1 AND state = 'published'`, [packageId]);
      await tx.query(
        `INSERT INTO package_versions (id, package_id, version, major, minor, patch, capabilities, state, published_at, runtime_url)
         VALUES ($1, $2, $3, $4, $5, $6, $7, 'published', now(), $8)`,
        [versionId, packageId, version, major, minor, patch, JSON.stringify(overrides.capabilities ?? []), overrides.runtimeUrl ?? null],
      );
      await tx.query(`UPDATE packages SET published_version_id = $2, latest_version_id = $2, updated_at = now() WHERE id = $1`, [
        packageId,
        versionId,
      ]);
    });
    this.forgetTargets(packageId);
    return { versionId };
  }

  /** Suspends a package as the operator API does, without the events (it leaves the marketplace). */
  async suspendPackage(packageId: string, reason = 'operator'): Promise<void> {
    await this.run(`UPDATE packages SET suspended_at = now(), suspension = jsonb_build_object('reason', $2::text) WHERE id = $1`, [
      packageId,
      reason,
    ]);
    this.forgetTargets(packageId);
  }

  /** Makes the verification link mailed to `email` older than its 24 hours. */
  async expireEmailVerification(email: string): Promise<void> {
    await this.run(
      `UPDATE email_verifications SET created_at = now() - interval '25 hours', expires_at = now() - interval '1 hour'
        WHERE developer_id = (SELECT id FROM developers WHERE email = $1)`,
      [email],
    );
  }

  /** Ends the grace period of an app's previous client secret (moved into the past rather than waited for). */
  async endPreviousSecretGrace(appId: string): Promise<void> {
    await this.run(`UPDATE apps SET previous_secret_expires_at = now() - interval '1 second' WHERE id = $1`, [appId]);
  }

  /** Pretends a package's last activity was `ago` ago. */
  async idlePackage(packageId: string, ago: string): Promise<void> {
    await this.run(`UPDATE packages SET last_activity_at = now() - $2::interval WHERE id = $1`, [packageId, ago]);
  }

  /** Points a package's published version at another runtime (as if it had been published with that URL). */
  async publishedRuntimeUrl(packageId: string, runtimeUrl: string): Promise<void> {
    await this.run(`UPDATE package_versions SET runtime_url = $2 WHERE id = (SELECT published_version_id FROM packages WHERE id = $1)`, [
      packageId,
      runtimeUrl,
    ]);
    this.forgetTargets(packageId);
  }

  /**
   * What the service's repositories do after their commit: drop the install targets this api instance remembers
   * for the package (`InstallTargets`), so the next call sees the change at once. Other instances learn it from the
   * triggers' notification, as they would of any change made in psql.
   */
  private forgetTargets(packageId: string): void {
    NotifiedCache.forgetInScope(this.dataSource, INSTALL_TARGETS_CHANNEL, packageId);
  }

  /** Pretends an app's webhook signing secret was last rotated `ago` ago. */
  async webhookSecretRotated(appId: string, ago: string): Promise<void> {
    await this.run(`UPDATE webhook_endpoints SET secret_rotated_at = now() - $2::interval WHERE app_id = $1 AND is_primary`, [appId, ago]);
  }

  /** Pretends an app's webhook endpoint has been failing since `ago` ago. */
  async webhookFailingSince(appId: string, ago: string): Promise<void> {
    await this.run(`UPDATE webhook_endpoints SET failing_since = now() - $2::interval WHERE app_id = $1 AND is_primary`, [appId, ago]);
  }
}
