import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ProblemError } from '../../common/errors/problem-error';
import { isId, newId } from '../../common/ids';
import { OutboundHttp } from '../../common/http/outbound-http';
import { PlatformPrincipal } from '../providers/auth/platform-principal';
import { AppsService } from '../providers/apps.service';
import { CapabilityDescriptor, RiskTier, WebhookEventType } from './capability-descriptor';
import { normaliseCapabilities } from './descriptor-normalizer';
import { CreatePackageDto, CreateVersionDto } from './dto/package.dto';
import { compareVersions, parseVersion } from './semver';

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

/** Usable in SELECT … FROM packages and in INSERT/UPDATE packages … RETURNING (the subquery names the table, not an alias). */
export const PACKAGE_COLUMNS =
  'id, app_id, developer_id, name, slug, description, risk_tier, ' +
  '(SELECT v.runtime_url FROM package_versions v WHERE v.id = COALESCE(packages.published_version_id, packages.latest_version_id)) AS runtime_url, ' +
  'latest_version_id, published_version_id, suspended_at, suspension, created_at, updated_at';
export const VERSION_COLUMNS =
  'id, package_id, version, capabilities, runtime_url, state, review_reason, submitted_at, published_at, created_at';

export function toVersionDto(v: VersionRow) {
  return {
    id: v.id,
    packageId: v.package_id,
    version: v.version,
    state: v.state,
    runtimeUrl: v.runtime_url,
    capabilities: v.capabilities,
    reviewReason: v.review_reason,
    submittedAt: v.submitted_at?.toISOString() ?? null,
    publishedAt: v.published_at?.toISOString() ?? null,
    createdAt: v.created_at.toISOString(),
  };
}

export function toPackageDto(p: PackageRow, versions?: VersionRow[]) {
  return {
    id: p.id,
    appId: p.app_id,
    name: p.name,
    slug: p.slug,
    description: p.description,
    riskTier: p.risk_tier,
    runtimeUrl: p.runtime_url,
    latestVersionId: p.latest_version_id,
    publishedVersionId: p.published_version_id,
    status: p.suspended_at ? 'suspended' : 'active',
    suspension: p.suspension,
    createdAt: p.created_at.toISOString(),
    updatedAt: p.updated_at.toISOString(),
    ...(versions ? { versions: versions.map(toVersionDto) } : {}),
  };
}

/** Writes the version's runtime into every capability the service calls (all but `webhook`); returns it. */
function stampRuntime(capabilities: CapabilityDescriptor[], runtimeUrl: string | null): string | null {
  if (runtimeUrl !== null) for (const capability of capabilities) if (capability.type !== 'webhook') capability.runtimeUrl = runtimeUrl;
  return runtimeUrl;
}

/** Onboarding step four: packages of capability descriptors and their versions. */
@Injectable()
export class PackagesService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly apps: AppsService,
    private readonly http: OutboundHttp,
  ) {}

  async create(principal: PlatformPrincipal, input: CreatePackageDto) {
    const app = await this.apps.owned(principal, input.appId);
    const capabilities = normaliseCapabilities(input.capabilities);
    const versionText = input.version ?? '1.0.0';
    const version = parseVersion(versionText);
    if (!version)
      throw new ProblemError('invalid_format', 'version must be three dot-separated numbers without leading zeros', { field: 'version' });
    const runtimeUrl = await this.resolveRuntime(capabilities, input.runtimeUrl);
    return this.dataSource.transaction(async (manager) => {
      const packageId = newId('pkg');
      const [row]: PackageRow[] = await manager.query(
        `INSERT INTO packages (id, app_id, developer_id, name, slug, description, risk_tier)
         VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (slug) DO NOTHING RETURNING ${PACKAGE_COLUMNS}`,
        [packageId, app.id, app.developer_id, input.name.trim(), input.slug, input.description, input.riskTier],
      );
      if (!row) throw new ProblemError('conflict', `The slug ${input.slug} is taken; choose another`, { field: 'slug' });
      const versionRow = await this.insertVersion(manager, row.id, versionText, version, capabilities, runtimeUrl);
      return toPackageDto({ ...row, latest_version_id: versionRow.id, runtime_url: runtimeUrl }, [versionRow]);
    });
  }

  async addVersion(principal: PlatformPrincipal, packageId: string, input: CreateVersionDto) {
    const pkg = await this.owned(principal, packageId);
    const capabilities = normaliseCapabilities(input.capabilities);
    const version = parseVersion(input.version);
    if (!version)
      throw new ProblemError('invalid_format', 'version must be three dot-separated numbers without leading zeros', { field: 'version' });
    const declared = await this.resolveRuntime(capabilities, input.runtimeUrl);
    return this.dataSource.transaction(async (manager) => {
      // Serialise version creation per package so "greater than the last" holds under concurrency.
      await manager.query(`SELECT id FROM packages WHERE id = $1 FOR UPDATE`, [pkg.id]);
      const [last]: Array<{ version: string; major: number; minor: number; patch: number; runtime_url: string }> = await manager.query(
        `SELECT version, major, minor, patch, runtime_url FROM package_versions WHERE package_id = $1 ORDER BY major DESC, minor DESC, patch DESC LIMIT 1`,
        [pkg.id],
      );
      if (last && compareVersions(version, last) <= 0) {
        throw new ProblemError('invalid_format', `version ${input.version} must be greater than the latest version ${last.version}`, {
          field: 'version',
        });
      }
      // The new version's own runtime; the published version keeps calling the one it was reviewed with until this one is published.
      const versionRuntime = declared ?? stampRuntime(capabilities, last?.runtime_url ?? pkg.runtime_url);
      return toVersionDto(await this.insertVersion(manager, pkg.id, input.version, version, capabilities, versionRuntime));
    });
  }

  async list(principal: PlatformPrincipal) {
    const rows: PackageRow[] =
      principal.kind === 'app'
        ? await this.dataSource.query(`SELECT ${PACKAGE_COLUMNS} FROM packages WHERE app_id = $1 ORDER BY created_at, id`, [
            principal.appId,
          ])
        : await this.dataSource.query(`SELECT ${PACKAGE_COLUMNS} FROM packages WHERE developer_id = $1 ORDER BY created_at, id`, [
            principal.developerId,
          ]);
    return { packages: rows.map((row) => toPackageDto(row)) };
  }

  async get(principal: PlatformPrincipal, packageId: string) {
    const pkg = await this.owned(principal, packageId);
    const versions: VersionRow[] = await this.dataSource.query(
      `SELECT ${VERSION_COLUMNS} FROM package_versions WHERE package_id = $1 ORDER BY major DESC, minor DESC, patch DESC`,
      [pkg.id],
    );
    return toPackageDto(pkg, versions);
  }

  /** The package when the principal may act on it; another developer's is `insufficient_scope` (403). */
  async owned(principal: PlatformPrincipal, packageId: string, manager?: EntityManager): Promise<PackageRow> {
    const db = manager ?? this.dataSource;
    const [row]: PackageRow[] = isId(packageId, 'pkg')
      ? await db.query(`SELECT ${PACKAGE_COLUMNS} FROM packages WHERE id = $1`, [packageId])
      : [];
    if (!row) throw new ProblemError('not_found', `No package ${packageId}`);
    const allowed = principal.kind === 'app' ? principal.appId === row.app_id : principal.developerId === row.developer_id;
    if (!allowed) throw new ProblemError('insufficient_scope', `Package ${packageId} belongs to another developer`);
    return row;
  }

  /**
   * Event types an app's packages registered for inbound webhooks, with the
   * schema of their `data`: from each package's published version, or its
   * latest one before anything is published (so providers can test first).
   */
  async webhookEventTypes(appId: string): Promise<Map<string, WebhookEventType>> {
    const rows: Array<{ capabilities: CapabilityDescriptor[] }> = await this.dataSource.query(
      `SELECT v.capabilities FROM packages p
         JOIN package_versions v ON v.id = COALESCE(p.published_version_id, p.latest_version_id)
        WHERE p.app_id = $1 AND p.suspended_at IS NULL`,
      [appId],
    );
    const types = new Map<string, WebhookEventType>();
    for (const row of rows) {
      for (const capability of row.capabilities) {
        for (const event of capability.type === 'webhook' ? (capability.events ?? []) : []) types.set(event.type, event);
      }
    }
    return types;
  }

  async version(packageId: string, versionId: string, manager?: EntityManager, lock = false): Promise<VersionRow> {
    const db = manager ?? this.dataSource;
    const [row]: VersionRow[] = isId(versionId, 'ver')
      ? await db.query(`SELECT ${VERSION_COLUMNS} FROM package_versions WHERE id = $1 AND package_id = $2${lock ? ' FOR UPDATE' : ''}`, [
          versionId,
          packageId,
        ])
      : [];
    if (!row) throw new ProblemError('not_found', `No version ${versionId} in package ${packageId}`);
    return row;
  }

  private async insertVersion(
    manager: EntityManager,
    packageId: string,
    text: string,
    version: { major: number; minor: number; patch: number },
    capabilities: CapabilityDescriptor[],
    runtimeUrl: string | null,
  ): Promise<VersionRow> {
    const [row]: VersionRow[] = await manager.query(
      `INSERT INTO package_versions (id, package_id, version, major, minor, patch, capabilities, runtime_url)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${VERSION_COLUMNS}`,
      [newId('ver'), packageId, text, version.major, version.minor, version.patch, JSON.stringify(capabilities), runtimeUrl],
    );
    await manager.query(`UPDATE packages SET latest_version_id = $2, last_activity_at = now(), updated_at = now() WHERE id = $1`, [
      packageId,
      row.id,
    ]);
    return row;
  }

  /**
   * The runtime a version declares, from where the spec puts it (`runtimeUrl`
   * on the capabilities) or the package-level default; null when it declares
   * none (a new version then keeps the previous version's). Each URL given is checked (HTTPS, public address) under the
   * field that named it. One runtime per version: the bridge calls the
   * version's runtime for every capability, so capabilities naming two
   * different ones are refused rather than half of them silently called at
   * the wrong address. Every capability that the service calls is stamped
   * with the resolved URL (mutating `capabilities`), so the stored descriptor
   * says where it is called.
   */
  private async resolveRuntime(capabilities: CapabilityDescriptor[], packageLevel: string | undefined): Promise<string | null> {
    const named: Array<{ field: string; url: string }> = [];
    if (packageLevel !== undefined) named.push({ field: 'runtimeUrl', url: await this.checkRuntimeUrl(packageLevel, 'runtimeUrl') });
    for (const [i, capability] of capabilities.entries()) {
      if (capability.runtimeUrl === undefined) continue;
      const field = `capabilities[${i}].runtimeUrl`;
      capability.runtimeUrl = await this.checkRuntimeUrl(capability.runtimeUrl, field);
      named.push({ field, url: capability.runtimeUrl });
    }
    const other = named.find((n) => n.url !== named[0].url);
    if (other) {
      throw new ProblemError(
        'invalid_format',
        `${other.field} is ${other.url} but ${named[0].field} is ${named[0].url}: all capabilities of a version share one runtime`,
        { field: other.field },
      );
    }
    return stampRuntime(capabilities, named[0]?.url ?? null);
  }

  private async checkRuntimeUrl(url: string, field: string): Promise<string> {
    const checked = await this.http.assertCallable(url, field);
    return checked.toString().replace(/\/+$/, '');
  }
}
