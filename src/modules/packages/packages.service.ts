import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ProblemError } from '../../common/errors/problem-error';
import { isId, newId } from '../../common/ids';
import { isObject } from '../../common/json';
import { OutboundHttp } from '../../common/http/outbound-http';
import type { Tx } from '../../infra/database/sql-repository';
import { PlatformPrincipal } from '../providers/auth/platform-principal';
import { AppsService } from '../providers/apps.service';
import { CapabilityDescriptor, type DescriptorFault as DescriptorError, WebhookEventType } from '@soul-service/rules';
import { normaliseCapabilities } from '../descriptors/descriptor-normalizer';
import { assertDescriptorRequest, refuseErrors } from '../descriptors/descriptor-contract';
import { CreatePackageDto, CreateVersionDto } from './dto/package.dto';
import { PackageVersionsRepository, VersionRow } from './package-versions.repository';
import { PackageRow, PackagesRepository } from './packages.repository';
import { compareVersions, parseVersion } from './semver';

export type { PackageRow } from './packages.repository';
export type { VersionRow } from './package-versions.repository';

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
    private readonly packageRows: PackagesRepository,
    private readonly versionRows: PackageVersionsRepository,
    private readonly apps: AppsService,
    private readonly http: OutboundHttp,
  ) {}

  /**
   * The body is checked against the published descriptor contract (every error at once) before
   * anything else reads it; the checks that need the database or the network follow.
   */
  async create(principal: PlatformPrincipal, body: unknown) {
    assertDescriptorRequest('package', body);
    const input = body as CreatePackageDto;
    const app = await this.apps.owned(principal, input.appId);
    const capabilities = normaliseCapabilities(input.capabilities);
    const versionText = input.version ?? '1.0.0';
    const version = parseVersion(versionText);
    if (!version)
      throw new ProblemError('invalid_format', 'version must be three dot-separated numbers without leading zeros', { field: 'version' });
    const runtimeUrl = await this.resolveRuntime(capabilities, input.runtimeUrl);
    return this.dataSource.transaction(async (manager) => {
      const packageId = newId('pkg');
      const row = await this.packageRows.insert(manager, {
        id: packageId,
        appId: app.id,
        developerId: app.developer_id,
        name: input.name.trim(),
        slug: input.slug,
        description: input.description,
        riskTier: input.riskTier,
      });
      if (!row) throw new ProblemError('conflict', `The slug ${input.slug} is taken; choose another`, { field: 'slug' });
      const versionRow = await this.insertVersion(manager, row.id, versionText, version, capabilities, runtimeUrl);
      return toPackageDto({ ...row, latest_version_id: versionRow.id, runtime_url: runtimeUrl }, [versionRow]);
    });
  }

  async addVersion(principal: PlatformPrincipal, packageId: string, body: unknown) {
    assertDescriptorRequest('version', body);
    const input = body as CreateVersionDto;
    const pkg = await this.owned(principal, packageId);
    const capabilities = normaliseCapabilities(input.capabilities);
    const version = parseVersion(input.version);
    if (!version)
      throw new ProblemError('invalid_format', 'version must be three dot-separated numbers without leading zeros', { field: 'version' });
    const declared = await this.resolveRuntime(capabilities, input.runtimeUrl);
    return this.dataSource.transaction(async (manager) => {
      // Serialise version creation per package so "greater than the last" holds under concurrency.
      await this.packageRows.lock(manager, pkg.id);
      const last = await this.versionRows.latestOf(manager, pkg.id);
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

  /**
   * The descriptors of a validate body, checked against the contract and normalised, or undefined
   * when there is no body (or an empty object): the stored version is validated then.
   */
  draftCapabilities(body: unknown, fullRun: boolean): CapabilityDescriptor[] | undefined {
    if (body === undefined || body === null || (isObject(body) && Object.keys(body).length === 0)) return undefined;
    if (fullRun)
      throw new ProblemError('invalid_format', 'a full run validates the stored version; send no body with full=true', { field: 'full' });
    assertDescriptorRequest('draft', body);
    return normaliseCapabilities((body as { capabilities: unknown[] }).capabilities);
  }

  async list(principal: PlatformPrincipal) {
    const rows =
      principal.kind === 'app'
        ? await this.packageRows.listForApp(principal.appId)
        : await this.packageRows.listForDeveloper(principal.developerId);
    return { packages: rows.map((row) => toPackageDto(row)) };
  }

  async get(principal: PlatformPrincipal, packageId: string) {
    const pkg = await this.owned(principal, packageId);
    const [versions, installCount] = await Promise.all([
      this.versionRows.listForPackage(pkg.id),
      this.packageRows.activeInstallCount(pkg.id),
    ]);
    return { ...toPackageDto(pkg, versions), installCount };
  }

  /** The package when the principal may act on it; another developer's is `insufficient_scope` (403). */
  async owned(principal: PlatformPrincipal, packageId: string, manager?: Tx): Promise<PackageRow> {
    const row = isId(packageId, 'pkg') ? await this.packageRows.findById(packageId, manager) : null;
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
    const packages = await this.packageRows.liveCapabilitiesForApp(appId);
    const types = new Map<string, WebhookEventType>();
    for (const capabilities of packages) {
      for (const capability of capabilities) {
        for (const event of capability.type === 'webhook' ? (capability.events ?? []) : []) types.set(event.type, event);
      }
    }
    return types;
  }

  async version(packageId: string, versionId: string, manager?: Tx, lock = false): Promise<VersionRow> {
    const row = isId(versionId, 'ver') ? await this.versionRows.findInPackage(packageId, versionId, manager, lock) : null;
    if (!row) throw new ProblemError('not_found', `No version ${versionId} in package ${packageId}`);
    return row;
  }

  /** Activity on a package (an install) keeps a published package from being suspended for inactivity; inside the caller's transaction. */
  async recordActivity(tx: Tx, packageId: string): Promise<void> {
    await this.packageRows.touchActivity(tx, packageId);
  }

  private async insertVersion(
    manager: Tx,
    packageId: string,
    text: string,
    version: { major: number; minor: number; patch: number },
    capabilities: CapabilityDescriptor[],
    runtimeUrl: string | null,
  ): Promise<VersionRow> {
    const row = await this.versionRows.insert(manager, { id: newId('ver'), packageId, text, version, capabilities, runtimeUrl });
    await this.packageRows.setLatestVersion(manager, packageId, row.id);
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
    const errors: DescriptorError[] = [];
    // Every URL is checked, so one answer names every refused one.
    const check = async (url: string, field: string): Promise<string | null> => {
      try {
        const checked = await this.checkRuntimeUrl(url, field);
        named.push({ field, url: checked });
        return checked;
      } catch (error) {
        if (!(error instanceof ProblemError) || error.status !== 400) throw error;
        errors.push({ code: 'invalid_format', field, schema_path: '$.$defs.runtimeUrl', message: error.detail });
        return null;
      }
    };
    if (packageLevel !== undefined) await check(packageLevel, 'runtimeUrl');
    for (const [i, capability] of capabilities.entries()) {
      if (capability.runtimeUrl === undefined) continue;
      const checked = await check(capability.runtimeUrl, `capabilities[${i}].runtimeUrl`);
      if (checked !== null) capability.runtimeUrl = checked;
    }
    for (const other of named.filter((n) => n.url !== named[0].url)) {
      errors.push({
        code: 'invalid_format',
        field: other.field,
        schema_path: '$.$defs.runtimeUrl',
        message: `${other.field} is ${other.url} but ${named[0].field} is ${named[0].url}: all capabilities of a version share one runtime`,
      });
    }
    refuseErrors(errors);
    return stampRuntime(capabilities, named[0]?.url ?? null);
  }

  private async checkRuntimeUrl(url: string, field: string): Promise<string> {
    const checked = await this.http.assertCallable(url, field);
    return checked.toString().replace(/\/+$/, '');
  }
}
