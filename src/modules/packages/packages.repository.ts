import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { INSTALL_TARGETS_CHANNEL } from '../../infra/database/change-channels';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';
import { CapabilityDescriptor, RiskTier } from '@soul-service/rules';

/** A package as the packages area uses it (DTO-ready: `toPackageDto` renders it). */
export interface PackageRow {
  id: string;
  app_id: string;
  developer_id: string;
  name: string;
  slug: string;
  description: string;
  risk_tier: RiskTier;
  /** The published version's runtime URL (what live traffic calls), else the newest version's; read from package_versions. */
  runtime_url: string | null;
  latest_version_id: string | null;
  published_version_id: string | null;
  suspended_at: Date | null;
  suspension: Record<string, unknown> | null;
  created_at: Date;
  updated_at: Date;
}

/** Usable in SELECT … FROM packages and in INSERT/UPDATE packages … RETURNING (the subquery names the table, not an alias). */
const PACKAGE_COLUMNS =
  'id, app_id, developer_id, name, slug, description, risk_tier, ' +
  '(SELECT v.runtime_url FROM package_versions v WHERE v.id = COALESCE(packages.published_version_id, packages.latest_version_id)) AS runtime_url, ' +
  'latest_version_id, published_version_id, suspended_at, suspension, created_at, updated_at';

/** The one writer of `packages`: creation, the latest and published version pointers, activity and suspension. */
@Injectable()
export class PackagesRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /** A new package; null when the slug is taken. */
  insert(
    tx: Tx,
    pkg: { id: string; appId: string; developerId: string; name: string; slug: string; description: string; riskTier: string },
  ): Promise<PackageRow | null> {
    return this.first<PackageRow>(
      `INSERT INTO packages (id, app_id, developer_id, name, slug, description, risk_tier)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (slug) DO NOTHING RETURNING ${PACKAGE_COLUMNS}`,
      [pkg.id, pkg.appId, pkg.developerId, pkg.name, pkg.slug, pkg.description, pkg.riskTier],
      tx,
    );
  }

  /** Active installs of the package (read only: `installs` is written by its own repository). */
  async activeInstallCount(packageId: string): Promise<number> {
    const row = await this.first<{ n: number }>(`SELECT count(*)::int AS n FROM installs WHERE package_id = $1 AND status = 'active'`, [
      packageId,
    ]);
    return row?.n ?? 0;
  }

  /** Locks the package row (serialises version creation and publication per package). */
  async lock(tx: Tx, id: string): Promise<void> {
    await this.execute(`SELECT id FROM packages WHERE id = $1 FOR UPDATE`, [id], tx);
  }

  findById(id: string, tx?: Tx): Promise<PackageRow | null> {
    return this.first<PackageRow>(`SELECT ${PACKAGE_COLUMNS} FROM packages WHERE id = $1`, [id], tx);
  }

  listForApp(appId: string): Promise<PackageRow[]> {
    return this.rows<PackageRow>(`SELECT ${PACKAGE_COLUMNS} FROM packages WHERE app_id = $1 ORDER BY created_at, id`, [appId]);
  }

  listForDeveloper(developerId: string): Promise<PackageRow[]> {
    return this.rows<PackageRow>(`SELECT ${PACKAGE_COLUMNS} FROM packages WHERE developer_id = $1 ORDER BY created_at, id`, [developerId]);
  }

  /** The capabilities of each unsuspended package of an app: its published version's, or its latest one's before anything is published. */
  async liveCapabilitiesForApp(appId: string): Promise<CapabilityDescriptor[][]> {
    const rows = await this.rows<{ capabilities: CapabilityDescriptor[] }>(
      `SELECT v.capabilities FROM packages p
         JOIN package_versions v ON v.id = COALESCE(p.published_version_id, p.latest_version_id)
        WHERE p.app_id = $1 AND p.suspended_at IS NULL`,
      [appId],
    );
    return rows.map((row) => row.capabilities);
  }

  /** The email of the package's developer (recorded as the submitter); reads the providers' `developers`. */
  async developerEmail(tx: Tx, developerId: string): Promise<string> {
    const [developer] = await this.rows<{ email: string }>(`SELECT email FROM developers WHERE id = $1`, [developerId], tx);
    return developer.email;
  }

  async setLatestVersion(tx: Tx, id: string, versionId: string): Promise<void> {
    await this.execute(
      `UPDATE packages SET latest_version_id = $2, last_activity_at = now(), updated_at = now() WHERE id = $1`,
      [id, versionId],
      tx,
    );
  }

  /** Activity (a submission, an install) keeps a published package from being suspended for inactivity. */
  async touchActivity(tx: Tx, id: string): Promise<void> {
    await this.execute(`UPDATE packages SET last_activity_at = now() WHERE id = $1`, [id], tx);
  }

  async setPublishedVersion(tx: Tx, id: string, versionId: string): Promise<PackageRow> {
    const { rows } = await this.changed<PackageRow>(
      `UPDATE packages SET published_version_id = $2, last_activity_at = now(), updated_at = now() WHERE id = $1
         RETURNING ${PACKAGE_COLUMNS}`,
      [id, versionId],
      tx,
    );
    this.forgetAfterTransaction(tx, INSTALL_TARGETS_CHANNEL, id);
    return rows[0];
  }

  /** Suspends an unsuspended package; null when it is suspended already or does not exist. */
  async suspend(tx: Tx, id: string, suspension: Record<string, unknown>): Promise<PackageRow | null> {
    const { rows } = await this.changed<PackageRow>(
      `UPDATE packages SET suspended_at = now(), suspension = $2, updated_at = now() WHERE id = $1 AND suspended_at IS NULL
         RETURNING ${PACKAGE_COLUMNS}`,
      [id, JSON.stringify(suspension)],
      tx,
    );
    this.forgetAfterTransaction(tx, INSTALL_TARGETS_CHANNEL, id);
    return rows[0] ?? null;
  }

  /** Whether the package is suspended; null when there is no such package. */
  async isSuspended(tx: Tx, id: string): Promise<boolean | null> {
    const row = await this.first<{ suspended: boolean }>(
      `SELECT suspended_at IS NOT NULL AS suspended FROM packages WHERE id = $1`,
      [id],
      tx,
    );
    return row ? row.suspended : null;
  }

  /** Published, unsuspended packages idle for `days`, oldest activity first (at most 500). */
  async idleSince(days: number): Promise<string[]> {
    const rows = await this.rows<{ id: string }>(
      `SELECT id FROM packages
        WHERE suspended_at IS NULL AND published_version_id IS NOT NULL AND last_activity_at < now() - make_interval(days => $1)
        ORDER BY last_activity_at LIMIT 500`,
      [days],
    );
    return rows.map((row) => row.id);
  }

  /** Lifts a suspension; null when the package is not suspended (or does not exist). */
  async reinstate(id: string): Promise<PackageRow | null> {
    const { rows } = await this.changed<PackageRow>(
      `UPDATE packages SET suspended_at = NULL, suspension = NULL, last_activity_at = now(), updated_at = now() WHERE id = $1 AND suspended_at IS NOT NULL
       RETURNING ${PACKAGE_COLUMNS}`,
      [id],
    );
    this.forgetAfterTransaction(undefined, INSTALL_TARGETS_CHANNEL, id);
    return rows[0] ?? null;
  }
}
