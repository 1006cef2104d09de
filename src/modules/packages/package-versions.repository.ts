import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';
import { CapabilityDescriptor } from '@soul-service/rules';

/** A version as the packages area uses it (DTO-ready: `toVersionDto` renders it). */
export interface VersionRow {
  id: string;
  package_id: string;
  version: string;
  capabilities: CapabilityDescriptor[];
  /** The runtime this version was (or will be) reviewed against; live traffic uses the published version's. Null until one is declared. */
  runtime_url: string | null;
  state: string;
  review_reason: string | null;
  submitted_at: Date | null;
  published_at: Date | null;
  created_at: Date;
}

/** A version waiting for an operator's review, with its package. */
export type ReviewRow = VersionRow & { name: string; slug: string; risk_tier: string; app_id: string; submitted_by: string };

const VERSION_COLUMNS = 'id, package_id, version, capabilities, runtime_url, state, review_reason, submitted_at, published_at, created_at';

/** The one writer of `package_versions`: creation, submission, review decisions and publication. */
@Injectable()
export class PackageVersionsRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /** The package's highest version (by semver numbers), or null before the first. */
  latestOf(tx: Tx, packageId: string) {
    return this.first<{ version: string; major: number; minor: number; patch: number; runtime_url: string }>(
      `SELECT version, major, minor, patch, runtime_url FROM package_versions WHERE package_id = $1 ORDER BY major DESC, minor DESC, patch DESC LIMIT 1`,
      [packageId],
      tx,
    );
  }

  async insert(
    tx: Tx,
    v: {
      id: string;
      packageId: string;
      text: string;
      version: { major: number; minor: number; patch: number };
      capabilities: CapabilityDescriptor[];
      runtimeUrl: string | null;
    },
  ): Promise<VersionRow> {
    const [row] = await this.rows<VersionRow>(
      `INSERT INTO package_versions (id, package_id, version, major, minor, patch, capabilities, runtime_url)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${VERSION_COLUMNS}`,
      [v.id, v.packageId, v.text, v.version.major, v.version.minor, v.version.patch, JSON.stringify(v.capabilities), v.runtimeUrl],
      tx,
    );
    return row;
  }

  /** A package's versions, highest first. */
  listForPackage(packageId: string): Promise<VersionRow[]> {
    return this.rows<VersionRow>(
      `SELECT ${VERSION_COLUMNS} FROM package_versions WHERE package_id = $1 ORDER BY major DESC, minor DESC, patch DESC`,
      [packageId],
    );
  }

  /** One version of a package, optionally locked for the caller's transaction. */
  findInPackage(packageId: string, versionId: string, tx?: Tx, lock = false): Promise<VersionRow | null> {
    return this.first<VersionRow>(
      `SELECT ${VERSION_COLUMNS} FROM package_versions WHERE id = $1 AND package_id = $2${lock ? ' FOR UPDATE' : ''}`,
      [versionId, packageId],
      tx,
    );
  }

  /** The capabilities of each version asked for (versions are immutable: callers may keep them). */
  capabilitiesOf(versionIds: string[]): Promise<Array<{ id: string; capabilities: CapabilityDescriptor[] }>> {
    return this.rows(`SELECT id, capabilities FROM package_versions WHERE id = ANY($1::text[])`, [versionIds]);
  }

  async markSubmitted(tx: Tx, id: string, state: 'in_review' | 'approved', submittedBy: string): Promise<VersionRow> {
    const { rows } = await this.changed<VersionRow>(
      `UPDATE package_versions SET state = $2, submitted_at = now(), submitted_by = $3, review_reason = NULL, updated_at = now()
          WHERE id = $1 RETURNING ${VERSION_COLUMNS}`,
      [id, state, submittedBy],
      tx,
    );
    return rows[0];
  }

  async approve(tx: Tx, packageId: string, versionId: string): Promise<VersionRow> {
    return this.decide(tx, packageId, versionId, `state = 'approved', decided_at = now(), review_reason = NULL`);
  }

  /** A rejected version goes back to draft with the operator's reason. */
  async reject(tx: Tx, packageId: string, versionId: string, reason: string): Promise<VersionRow> {
    return this.decide(tx, packageId, versionId, `state = 'draft', decided_at = now(), review_reason = $3`, [reason]);
  }

  /** The package's published version (if any) becomes superseded, before another is published. */
  async supersedePublished(tx: Tx, packageId: string): Promise<void> {
    await this.execute(
      `UPDATE package_versions SET state = 'superseded', updated_at = now() WHERE package_id = $1 AND state = 'published'`,
      [packageId],
      tx,
    );
  }

  async markPublished(tx: Tx, id: string): Promise<VersionRow> {
    const { rows } = await this.changed<VersionRow>(
      `UPDATE package_versions SET state = 'published', published_at = now(), updated_at = now() WHERE id = $1
         RETURNING ${VERSION_COLUMNS}`,
      [id],
      tx,
    );
    return rows[0];
  }

  /** Versions in review, oldest submission first, with their packages. */
  reviewQueue(): Promise<ReviewRow[]> {
    return this.rows<ReviewRow>(
      `SELECT v.id, v.package_id, v.version, v.capabilities, v.runtime_url, v.state, v.review_reason, v.submitted_at, v.published_at, v.created_at, v.submitted_by,
              p.name, p.slug, p.risk_tier, p.app_id
         FROM package_versions v JOIN packages p ON p.id = v.package_id
        WHERE v.state = 'in_review' ORDER BY v.submitted_at, v.id`,
    );
  }

  private async decide(tx: Tx, packageId: string, versionId: string, set: string, extra: unknown[] = []): Promise<VersionRow> {
    const { rows } = await this.changed<VersionRow>(
      `UPDATE package_versions SET ${set}, updated_at = now() WHERE id = $1 AND package_id = $2
         RETURNING ${VERSION_COLUMNS}`,
      [versionId, packageId, ...extra],
      tx,
    );
    return rows[0];
  }
}
