import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { INSTALL_TARGETS_CHANNEL } from '../../infra/database/change-channels';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';

/** An install with its version and package names (DTO-ready: `toInstallDto` renders it). */
export interface InstallRow {
  id: string;
  user_id: string;
  package_id: string;
  version_id: string;
  app_id: string;
  scopes: string[];
  status: string;
  removed_reason: string | null;
  created_at: Date;
  removed_at: Date | null;
  version?: string;
  slug?: string;
  package_name?: string;
  pending_version_id: string | null;
  pending_version: string | null;
  /** Capability modes the pending version adds to the installed one (what the user is asked to consent to). */
  pending_new_modes: string[] | null;
  reauthorization_required_at: Date | null;
}

/** An active install as the runtime bridge calls it, without the installed version's capabilities (read per version). */
export interface TargetRow {
  install_id: string;
  user_id: string;
  package_id: string;
  package_name: string;
  app_id: string;
  developer_id: string;
  scopes: string[];
  runtime_url: string;
  package_suspended: boolean;
  developer_suspended: boolean;
  /** The app's provider tier (`apps.tier`): the bridge's limits, timeout and response cap follow it. */
  app_tier: string;
  version_id: string;
}

/** An install of the user's, as their personal-data export lists it. */
export interface InstallExportRow {
  id: string;
  package_id: string;
  slug: string;
  version: string;
  scopes: string[];
  status: string;
  removed_reason: string | null;
  created_at: Date;
  removed_at: Date | null;
}

const COLUMNS = `i.id, i.user_id, i.package_id, i.version_id, i.app_id, i.scopes, i.status, i.removed_reason, i.created_at, i.removed_at,
  v.version, p.slug, p.name AS package_name, i.pending_version_id, pv.version AS pending_version, i.reauthorization_required_at,
  CASE WHEN pv.id IS NULL THEN NULL ELSE ARRAY(
    SELECT DISTINCT n->>'type' FROM jsonb_array_elements(pv.capabilities) n
     WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(v.capabilities) o WHERE o->>'type' = n->>'type') ORDER BY 1) END AS pending_new_modes`;
const FROM = `installs i JOIN package_versions v ON v.id = i.version_id JOIN packages p ON p.id = i.package_id
  LEFT JOIN package_versions pv ON pv.id = i.pending_version_id`;

/**
 * The installed version's capabilities come from `capabilitiesOf`, not from this query. The runtime is the
 * published version's (the reviewed one): a newer draft naming another runtime moves no traffic until it is published.
 */
const TARGET_SELECT = `SELECT i.id AS install_id, i.user_id, i.package_id, p.name AS package_name, i.app_id, p.developer_id, i.scopes,
         live.runtime_url, (p.suspended_at IS NOT NULL) AS package_suspended, (d.status = 'suspended') AS developer_suspended,
         i.version_id, a.tier AS app_tier
    FROM installs i JOIN packages p ON p.id = i.package_id JOIN developers d ON d.id = p.developer_id JOIN apps a ON a.id = i.app_id
    JOIN package_versions live ON live.id = COALESCE(p.published_version_id, i.version_id)`;

/**
 * Capability modes are what a user consents to (the marketplace shows them as
 * "what it can do"); a version whose modes are all among the installed
 * version's needs no new consent (docs/decisions.md, "upgrade rule").
 */
const NEEDS_CONSENT_SQL = `EXISTS (SELECT 1 FROM jsonb_array_elements(nv.capabilities) n
   WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(cur.capabilities) o WHERE o->>'type' = n->>'type'))`;

/** The one reader and writer of `installs` (its queries join the installed package and versions). */
@Injectable()
export class InstallsRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /**
   * The published version of an unsuspended package, locking the package row as a publish locks it: the version
   * read here is still the published one at commit, so a publish either sees the install (and moves it) or comes
   * first (and the install takes its version).
   */
  lockPublishedVersion(tx: Tx, packageId: string): Promise<{ version_id: string; version: string } | null> {
    return this.first(
      `SELECT v.id AS version_id, v.version FROM packages p JOIN package_versions v ON v.id = p.published_version_id
          WHERE p.id = $1 AND p.suspended_at IS NULL FOR NO KEY UPDATE OF p`,
      [packageId],
      tx,
    );
  }

  /** A new active install; false when the user has an active install of the package already. */
  async insertActive(
    tx: Tx,
    install: { id: string; userId: string; packageId: string; versionId: string; appId: string; scopes: string[] },
  ): Promise<boolean> {
    const inserted = await this.rows<{ id: string }>(
      `INSERT INTO installs (id, user_id, package_id, version_id, app_id, scopes) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (user_id, package_id) WHERE status = 'active' DO NOTHING RETURNING id`,
      [install.id, install.userId, install.packageId, install.versionId, install.appId, install.scopes],
      tx,
    );
    return inserted.length > 0;
  }

  findById(tx: Tx, id: string): Promise<InstallRow | null> {
    return this.first<InstallRow>(`SELECT ${COLUMNS} FROM ${FROM} WHERE i.id = $1`, [id], tx);
  }

  findMany(tx: Tx, ids: string[]): Promise<InstallRow[]> {
    return this.rows<InstallRow>(`SELECT ${COLUMNS} FROM ${FROM} WHERE i.id = ANY($1::text[])`, [ids], tx);
  }

  /** The user's active install of a package, locked. */
  findActiveForUpdate(tx: Tx, userId: string, packageId: string): Promise<InstallRow | null> {
    return this.first<InstallRow>(
      `SELECT ${COLUMNS} FROM ${FROM} WHERE i.user_id = $1 AND i.package_id = $2 AND i.status = 'active' FOR UPDATE OF i`,
      [userId, packageId],
      tx,
    );
  }

  /** One install of the user's, locked; null when there is none (or it is another user's). */
  findOwnedForUpdate(tx: Tx, userId: string, installId: string): Promise<InstallRow | null> {
    return this.first<InstallRow>(
      `SELECT ${COLUMNS} FROM ${FROM} WHERE i.id = $1 AND i.user_id = $2 FOR UPDATE OF i`,
      [installId, userId],
      tx,
    );
  }

  /** Every active install of a user, locked. */
  activeForUserForUpdate(tx: Tx, userId: string): Promise<InstallRow[]> {
    return this.rows<InstallRow>(
      `SELECT ${COLUMNS} FROM ${FROM} WHERE i.user_id = $1 AND i.status = 'active' FOR UPDATE OF i`,
      [userId],
      tx,
    );
  }

  listActiveForUser(userId: string): Promise<InstallRow[]> {
    return this.rows<InstallRow>(
      `SELECT ${COLUMNS} FROM ${FROM} WHERE i.user_id = $1 AND i.status = 'active' ORDER BY i.created_at, i.id`,
      [userId],
    );
  }

  /** The user's consent again: the version, no pending upgrade, no re-authorization due, the scopes given. */
  async consent(tx: Tx, id: string, versionId: string, scopes: string[]): Promise<void> {
    const { rows } = await this.changed<{ package_id: string }>(
      `UPDATE installs SET version_id = $2, pending_version_id = NULL, reauthorization_required_at = NULL, scopes = $3 WHERE id = $1
       RETURNING package_id`,
      [id, versionId, scopes],
      tx,
    );
    this.forgetTargets(tx, rows);
  }

  /** The sealed refresh token of the install's current token family. */
  async setRefreshToken(tx: Tx, id: string, sealed: string): Promise<void> {
    await this.execute(`UPDATE installs SET refresh_token_encrypted = $2 WHERE id = $1`, [id, sealed], tx);
  }

  /**
   * Active installs of the packages whose published version is one of `versionIds` move to it when it adds no
   * capability mode to theirs, else it waits on them as pending; answers the installs changed.
   */
  async followPublished(
    tx: Tx,
    versionIds: string[],
  ): Promise<Array<{ id: string; user_id: string; needs_consent: boolean; version_id: string }>> {
    const { rows } = await this.changed<{ id: string; user_id: string; needs_consent: boolean; version_id: string; package_id: string }>(
      `WITH candidates AS (
         SELECT i.id, i.user_id, nv.id AS new_version_id, ${NEEDS_CONSENT_SQL} AS needs_consent
           FROM package_versions nv
           JOIN packages pk ON pk.published_version_id = nv.id
           JOIN installs i ON i.package_id = nv.package_id AND i.status = 'active' AND i.version_id <> nv.id
           JOIN package_versions cur ON cur.id = i.version_id
          WHERE nv.id = ANY($1::text[])
          ORDER BY i.id
            FOR UPDATE OF i
       )
       UPDATE installs SET version_id = CASE WHEN c.needs_consent THEN installs.version_id ELSE c.new_version_id END,
                           pending_version_id = CASE WHEN c.needs_consent THEN c.new_version_id ELSE NULL END
         FROM candidates c
        WHERE installs.id = c.id AND NOT (c.needs_consent AND installs.pending_version_id IS NOT DISTINCT FROM c.new_version_id)
       RETURNING installs.id, installs.user_id, c.needs_consent, installs.version_id, installs.package_id`,
      [versionIds],
      tx,
    );
    this.forgetTargets(tx, rows);
    return rows.map(({ id, user_id, needs_consent, version_id }) => ({ id, user_id, needs_consent, version_id }));
  }

  /** Marks active installs as needing re-authorization; answers the ids newly marked. */
  async markReauthorizationRequired(tx: Tx, ids: string[]): Promise<string[]> {
    const { rows } = await this.changed<{ id: string }>(
      `UPDATE installs SET reauthorization_required_at = now()
        WHERE id = ANY($1::text[]) AND status = 'active' AND reauthorization_required_at IS NULL RETURNING id`,
      [ids],
      tx,
    );
    return rows.map((row) => row.id);
  }

  async markRemoved(tx: Tx, id: string, reason: string): Promise<void> {
    const { rows } = await this.changed<{ package_id: string }>(
      `UPDATE installs SET status = 'removed', removed_reason = $2, removed_at = now(), refresh_token_encrypted = NULL WHERE id = $1
       RETURNING package_id`,
      [id, reason],
      tx,
    );
    this.forgetTargets(tx, rows);
  }

  /** The in-process half of the `installs_targets_changed` trigger: this instance's remembered targets of the packages. */
  private forgetTargets(tx: Tx, rows: Array<{ package_id: string }>): void {
    for (const packageId of new Set(rows.map((row) => row.package_id))) this.forgetAfterTransaction(tx, INSTALL_TARGETS_CHANNEL, packageId);
  }

  executionTargetById(installId: string): Promise<TargetRow[]> {
    return this.rows<TargetRow>(`${TARGET_SELECT} WHERE i.id = $1 AND i.status = 'active'`, [installId]);
  }

  executionTargetForUser(userId: string, packageId: string): Promise<TargetRow[]> {
    return this.rows<TargetRow>(`${TARGET_SELECT} WHERE i.user_id = $1 AND i.package_id = $2 AND i.status = 'active'`, [userId, packageId]);
  }

  /** Active installs (optionally of one user) as execution targets, oldest first. */
  activeTargets(userId?: string): Promise<TargetRow[]> {
    return userId
      ? this.rows<TargetRow>(`${TARGET_SELECT} WHERE i.user_id = $1 AND i.status = 'active' ORDER BY i.created_at, i.id`, [userId])
      : this.rows<TargetRow>(`${TARGET_SELECT} WHERE i.status = 'active' ORDER BY i.created_at, i.id`);
  }

  /** Every install of the user's, removed ones included, for the personal-data export. */
  exportFor(userId: string, tx?: Tx): Promise<InstallExportRow[]> {
    return this.rows<InstallExportRow>(
      `SELECT i.id, i.package_id, p.slug, v.version, i.scopes, i.status, i.removed_reason, i.created_at, i.removed_at
           FROM installs i JOIN packages p ON p.id = i.package_id JOIN package_versions v ON v.id = i.version_id
          WHERE i.user_id = $1 ORDER BY i.created_at, i.id`,
      [userId],
      tx,
    );
  }
}
