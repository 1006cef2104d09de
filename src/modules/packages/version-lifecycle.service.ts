import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ProblemError } from '../../common/errors/problem-error';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { ConformanceRunner, Verdict } from '../conformance/conformance-runner';
import { ConformanceRuns, RunRow, toRunDto } from '../conformance/conformance-runs.service';
import { FULL_RUN_JOB } from '../conformance/conformance.queue';
import { WebhookReceivers } from '../conformance/webhook-receivers';
import type { Tx } from '../../infra/database/sql-repository';
import { JobOutbox } from '../../infra/queue/job-outbox';
import { DomainEvents } from '../events/domain-events';
import { PlatformPrincipal } from '../providers/auth/platform-principal';
import type { CapabilityDescriptor } from '@soul-service/rules';
import { PackageVersionsRepository, VersionRow } from './package-versions.repository';
import { PackageRow, PackagesRepository } from './packages.repository';
import { PackagesService, toPackageDto, toVersionDto } from './packages.service';
import { assertMove } from './version-states';

export const PASSING_SCORE = 80;
export const DIMENSION_FLOOR = 5;
/** A full run this recent is reused by submission instead of calling the runtime again. */
const FRESH_RUN_SECONDS = 15 * 60;

export const PACKAGE_EVENTS = {
  submitted: 'package.submitted',
  published: 'package.published',
  suspended: 'package.suspended',
} as const;

/**
 * Onboarding steps five to seven and what follows: validation, submission
 * (with the conformance gate), review, publication, suspension and reinstatement.
 * Every state move is checked (version-states.ts) and records its domain event
 * in the same transaction.
 */
@Injectable()
export class VersionLifecycle {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly packages: PackagesService,
    private readonly packageRows: PackagesRepository,
    private readonly versionRows: PackageVersionsRepository,
    private readonly runner: ConformanceRunner,
    private readonly runs: ConformanceRuns,
    private readonly jobs: JobOutbox,
    private readonly events: DomainEvents,
    private readonly receivers: WebhookReceivers,
  ) {}

  /**
   * Local validation (schema, contracts, documentation) now, or a queued full run of all six. A local
   * validation of `draft` descriptors (checked and normalised by the caller) validates them in place
   * of the stored ones, against the version's runtime; they are not stored.
   */
  async validate(principal: PlatformPrincipal, packageId: string, versionId: string, full: boolean, draft?: CapabilityDescriptor[]) {
    const pkg = await this.packages.owned(principal, packageId);
    const version = await this.packages.version(pkg.id, versionId);
    const target = { packageId: pkg.id, versionId: version.id, developerId: pkg.developer_id, appId: pkg.app_id };
    if (full) {
      // The run and its job commit together (job outbox), then the job is relayed at once.
      const run = await this.dataSource.transaction(async (manager) => {
        const queued = await this.runs.queue(target, manager);
        await this.jobs.record(manager, {
          ...FULL_RUN_JOB,
          id: queued.id,
          data: {
            confId: queued.id,
            // A version is validated against its own runtime (a draft's may differ from the published one).
            runtimeUrl: version.runtime_url,
            riskTier: pkg.risk_tier,
            capabilities: version.capabilities,
          },
        });
        return queued;
      });
      await this.jobs.relayNow([run.id]);
      return { accepted: true as const, run: toRunDto(run) };
    }
    // A draft is validated as the version would call it: the runtimes it names are not checked here, nor used.
    for (const capability of draft ?? []) {
      delete capability.runtimeUrl;
      if (capability.type !== 'webhook' && version.runtime_url !== null) capability.runtimeUrl = version.runtime_url;
    }
    const report = await this.runner.run({
      runtimeUrl: version.runtime_url,
      riskTier: pkg.risk_tier,
      capabilities: draft ?? version.capabilities,
      full: false,
    });
    const run = await this.runs.recordCompleted(target, report);
    return {
      accepted: false as const,
      result: {
        id: run.id,
        score: report.score,
        passed: report.passed,
        full: false,
        dimensions: report.dimensions,
        rulesVersion: report.rulesVersion,
      },
    };
  }

  async submit(principal: PlatformPrincipal, packageId: string, versionId: string) {
    const pkg = await this.packages.owned(principal, packageId);
    this.refuseSuspended(pkg);
    const version = await this.packages.version(pkg.id, versionId);
    assertMove('submit', version.state, version.id);

    const fresh = await this.runs.freshFullRun(version.id, FRESH_RUN_SECONDS);
    const run = fresh ?? (await this.fullRunNow(pkg, version));
    this.enforceGate(run);

    const manual = this.needsManualReview(pkg, version);
    return this.dataSource.transaction(async (manager) => {
      const current = await this.packages.version(pkg.id, version.id, manager, true);
      assertMove('submit', current.state, current.id);
      const submittedBy = await this.packageRows.developerEmail(manager, pkg.developer_id);
      const updated = await this.versionRows.markSubmitted(manager, version.id, manual ? 'in_review' : 'approved', submittedBy);
      await this.packageRows.touchActivity(manager, pkg.id);
      await this.events.record(manager, {
        type: PACKAGE_EVENTS.submitted,
        payload: {
          app_id: pkg.app_id,
          data: {
            package_id: pkg.id,
            version_id: version.id,
            version: version.version,
            name: pkg.name,
            risk_tier: pkg.risk_tier,
            submitted_by: submittedBy,
          },
        },
      });
      return { version: toVersionDto(updated), review: manual ? 'manual' : 'automatic', conformance: toRunDto(run) };
    });
  }

  async approve(packageId: string, versionId: string) {
    return this.move(packageId, versionId, 'approve', (tx) => this.versionRows.approve(tx, packageId, versionId));
  }

  async reject(packageId: string, versionId: string, reason: string) {
    return this.move(packageId, versionId, 'reject', (tx) => this.versionRows.reject(tx, packageId, versionId, reason));
  }

  async publish(principal: PlatformPrincipal, packageId: string, versionId: string) {
    const pkg = await this.packages.owned(principal, packageId);
    this.refuseSuspended(pkg);
    return this.dataSource.transaction(async (manager) => {
      await this.packageRows.lock(manager, pkg.id);
      const version = await this.packages.version(pkg.id, versionId, manager, true);
      assertMove('publish', version.state, version.id);
      await this.versionRows.supersedePublished(manager, pkg.id);
      const published = await this.versionRows.markPublished(manager, version.id);
      const row = await this.packageRows.setPublishedVersion(manager, pkg.id, version.id);
      const catalogUrl = `${this.config.publicBaseUrl}/v1/marketplace/packages/${pkg.slug}`;
      await this.events.record(manager, {
        type: PACKAGE_EVENTS.published,
        payload: {
          app_id: pkg.app_id,
          data: { package_id: pkg.id, version_id: version.id, version: version.version, name: pkg.name, catalog_url: catalogUrl },
        },
      });
      return { ...toPackageDto(row), version: toVersionDto(published), catalogUrl };
    });
  }

  /** Suspends a package (operator, inactivity or sustained health check failures). */
  async suspend(packageId: string, suspension: { reason: string; message: string; remediation: string }, manager?: Tx) {
    const work = async (m: Tx) => {
      const row = await this.packageRows.suspend(m, packageId, suspension);
      if (!row) {
        const suspended = await this.packageRows.isSuspended(m, packageId);
        if (suspended === null) throw new ProblemError('not_found', `No package ${packageId}`);
        throw new ProblemError('conflict', `Package ${packageId} is already suspended`);
      }
      await this.events.record(m, {
        type: PACKAGE_EVENTS.suspended,
        payload: {
          app_id: row.app_id,
          data: {
            package_id: row.id,
            reason: suspension.reason,
            message: suspension.message,
            suspended_at: row.suspended_at!.toISOString(),
            remediation: suspension.remediation,
          },
        },
      });
      return toPackageDto(row);
    };
    return manager ? work(manager) : this.dataSource.transaction(work);
  }

  /** Suspends published packages idle for `PACKAGE_INACTIVITY_DAYS` (retention job). Returns how many. */
  async suspendInactive(): Promise<number> {
    const idle = await this.packageRows.idleSince(this.config.packageInactivityDays);
    for (const id of idle) {
      await this.suspend(id, {
        reason: 'inactivity',
        message: `No activity for ${this.config.packageInactivityDays} days`,
        remediation: 'Publish a new version or contact support to request reinstatement',
      }).catch((error: unknown) => {
        if (!(error instanceof ProblemError && error.code === 'conflict')) throw error; // suspended meanwhile
      });
    }
    return idle.length;
  }

  async reinstate(packageId: string) {
    const row = await this.packageRows.reinstate(packageId);
    if (!row) throw new ProblemError('conflict', `Package ${packageId} is not suspended (or does not exist)`);
    return toPackageDto(row);
  }

  async reviewQueue() {
    const rows = await this.versionRows.reviewQueue();
    return {
      reviews: rows.map((r) => ({
        ...toVersionDto(r),
        package: { id: r.package_id, name: r.name, slug: r.slug, riskTier: r.risk_tier, appId: r.app_id },
        submittedBy: r.submitted_by,
      })),
    };
  }

  /**
   * Policy for automatic listing: only `data_only` packages, and only when no
   * capability can change anything (no `action` mode). Everything else is reviewed by a person.
   */
  private needsManualReview(pkg: PackageRow, version: VersionRow): boolean {
    return pkg.risk_tier !== 'data_only' || version.capabilities.some((c) => c.type === 'action');
  }

  private async fullRunNow(pkg: PackageRow, version: VersionRow): Promise<RunRow> {
    const report: Verdict = await this.runner.run({
      runtimeUrl: version.runtime_url,
      riskTier: pkg.risk_tier,
      capabilities: version.capabilities,
      full: true,
      appId: pkg.app_id,
      webhook: await this.receivers.forApp(pkg.app_id),
    });
    return this.runs.recordCompleted(
      { packageId: pkg.id, versionId: version.id, developerId: pkg.developer_id, appId: pkg.app_id },
      report,
    );
  }

  private enforceGate(run: RunRow): void {
    const extras = { conformance_id: run.id, score: run.score, dimensions: run.dimensions };
    if ((run.score ?? 0) < PASSING_SCORE) {
      throw new ProblemError(
        'conformance_failed',
        `The conformance score is ${run.score}/100; at least ${PASSING_SCORE} is needed to submit`,
        extras,
      );
    }
    // Only dimensions that ran count (a local run leaves three unrun); submission always uses a full run.
    const low = Object.entries(run.dimensions ?? {}).filter(([, d]) => d.ran !== false && d.score < DIMENSION_FLOOR);
    if (low.length > 0) {
      throw new ProblemError(
        'dimension_below_threshold',
        `Dimension ${low.map(([k, d]) => `${k} (${d.score})`).join(', ')} scored below ${DIMENSION_FLOOR}, which blocks submission even with an aggregate of ${run.score}`,
        { ...extras, dimension: low[0][0] },
      );
    }
  }

  private refuseSuspended(pkg: PackageRow): void {
    if (pkg.suspended_at)
      throw new ProblemError('account_suspended', `Package ${pkg.id} is suspended; contact support to request reinstatement`);
  }

  private async move(packageId: string, versionId: string, move: 'approve' | 'reject', decide: (tx: Tx) => Promise<VersionRow>) {
    return this.dataSource.transaction(async (manager) => {
      const version = await this.packages.version(packageId, versionId, manager, true);
      assertMove(move, version.state, version.id);
      return toVersionDto(await decide(manager));
    });
  }
}
