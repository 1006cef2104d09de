import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { LRUCache } from 'lru-cache';
import { DataSource } from 'typeorm';
import { SecretBox } from '../../common/crypto/secret-box';
import { ApiError } from '../../common/errors/api-error';
import { isId, newId } from '../../common/ids';
import type { Tx } from '../../infra/database/sql-repository';
import { JobOutbox, OutboxJob } from '../../infra/queue/job-outbox';
import { QUEUES, RUNTIME_BRIDGE_JOBS } from '../../infra/queue/queues';
import { DomainEvents } from '../events/domain-events';
import { OAuthTokens } from '../providers/oauth-tokens.service';
import { CapabilityDescriptor } from '@soul-service/rules';
import { PackageVersionsRepository } from '../packages/package-versions.repository';
import { PackagesService } from '../packages/packages.service';
import { InstallTargets } from './install-targets';
import { InstallRow, InstallsRepository, TargetRow } from './installs.repository';
import { MarketplaceService } from './marketplace.service';

export type { InstallRow } from './installs.repository';

export const INSTALL_EVENTS = { created: 'install.created', removed: 'install.removed' } as const;
/** Why an install ended (the spec leaves the set open). */
export const REMOVAL_REASONS = ['user_uninstalled', 'soul_deleted', 'package_suspended', 'account_deleted'] as const;

/** An install whose state changed outside the user's request (a published version, a runtime refusing its tokens). */
export interface InstallChange {
  user_id: string;
  reason: 'upgraded' | 'upgrade_available' | 'reauthorization_required';
  install: ReturnType<typeof toInstallDto>;
}

/** An active install as the runtime bridge calls it: the install's target and the installed version's capabilities. */
export interface ExecutionTarget extends Omit<TargetRow, 'version_id'> {
  capabilities: CapabilityDescriptor[];
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

export function toInstallDto(row: InstallRow) {
  return {
    id: row.id,
    package_id: row.package_id,
    package_slug: row.slug,
    package_name: row.package_name,
    version: row.version,
    scopes: row.scopes,
    status: row.status,
    removed_reason: row.removed_reason,
    created_at: row.created_at.toISOString(),
    removed_at: row.removed_at?.toISOString() ?? null,
    reauthorization_required: row.status === 'active' && row.reauthorization_required_at !== null,
    upgrade:
      row.status === 'active' && row.pending_version_id
        ? { version_id: row.pending_version_id, version: row.pending_version!, new_capability_modes: row.pending_new_modes ?? [] }
        : null,
  };
}

/**
 * The job that fetches an install's first state at once (the runtime bridge's
 * `pollInstall`): recorded in the transaction that makes the install (or moves
 * it to another version), so it runs if and only if that commits. Its id is
 * the install's and the version's: a repeated record of the same change is one
 * job, a later version change is another.
 */
function firstPollJob(installId: string, versionId: string): OutboxJob {
  return {
    queue: QUEUES.runtimeBridge,
    name: RUNTIME_BRIDGE_JOBS.pollInstall,
    id: `poll-install-${installId}-${versionId}`,
    data: { installId },
    // A runtime failure is handled (and counted) by the poll itself; only an outage of Redis or PostgreSQL throws.
    opts: { attempts: 3 },
  };
}

const sameSet = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x));

/**
 * A user's installs of published packages. Each install gets its own OAuth
 * token family for the runtime calls made on the user's behalf; the refresh
 * token is sealed at rest.
 */
@Injectable()
export class InstallsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly installs: InstallsRepository,
    private readonly versions: PackageVersionsRepository,
    private readonly packages: PackagesService,
    private readonly marketplace: MarketplaceService,
    private readonly oauth: OAuthTokens,
    private readonly secretBox: SecretBox,
    private readonly events: DomainEvents,
    private readonly jobs: JobOutbox,
    private readonly targets: InstallTargets,
  ) {}

  private readonly versionCapabilities = new LRUCache<string, CapabilityDescriptor[]>({ max: 2_000 });

  /**
   * Installs the published version. Installing an installed package is the
   * user's consent again (docs/decisions.md, "upgrade rule"): the install moves
   * to the published version, takes the scopes given (the granted ones when
   * none are), and a needed re-authorization is cleared with a new token
   * family; with nothing to change it answers the existing install.
   */
  async install(
    userId: string,
    packageId: string,
    scopes?: string[],
  ): Promise<{ created: boolean; install: ReturnType<typeof toInstallDto> }> {
    const pkg = await this.marketplace.installable(packageId);
    const requested = scopes ? [...new Set(scopes)] : undefined;
    // A user can only grant what the app itself holds (the authorize flow checks the same).
    const beyondApp = (requested ?? []).filter((scope) => !pkg.app_scopes.includes(scope));
    if (beyondApp.length > 0) {
      throw new ApiError(
        'BAD_REQUEST',
        `scope ${beyondApp.join(', ')} cannot be granted: the app of this package does not hold it; it holds ${pkg.app_scopes.join(' ') || 'no scope'}`,
      );
    }
    return this.dataSource.transaction(async (manager) => {
      // The package row is locked as a publish locks it: the version read here is still the published one at commit,
      // so a publish either sees this install (and moves it) or comes first (and this install takes its version).
      const live = await this.installs.lockPublishedVersion(manager, pkg.id);
      if (!live) throw new ApiError('NOT_FOUND', `No published package ${packageId}`);
      const granted = requested ?? ['capabilities:execute'];
      const id = newId('inst');
      const inserted = await this.installs.insertActive(manager, {
        id,
        userId,
        packageId: pkg.id,
        versionId: live.version_id,
        appId: pkg.app_id,
        scopes: granted,
      });
      if (!inserted) {
        const existing = (await this.installs.findActiveForUpdate(manager, userId, pkg.id))!;
        return { created: false, install: toInstallDto(await this.consentAgain(manager, existing, live.version_id, requested, pkg)) };
      }
      await this.issueGrant(manager, { id, userId, appId: pkg.app_id, developerId: pkg.developer_id, scopes: granted });
      await this.packages.recordActivity(manager, pkg.id);
      await this.events.record(manager, {
        type: INSTALL_EVENTS.created,
        payload: {
          app_id: pkg.app_id,
          data: { install_id: id, user_id: userId, package_id: pkg.id, version: live.version, scopes_granted: granted },
        },
      });
      // The widgets' first state comes at once, not at the poller's next tick.
      await this.jobs.record(manager, firstPollJob(id, live.version_id));
      const row = (await this.installs.findById(manager, id))!;
      return { created: true, install: toInstallDto(row) };
    });
  }

  /** A repeat install of an active one: the published version, the scopes asked for, and a fresh grant when one is due. */
  private async consentAgain(
    manager: Tx,
    existing: InstallRow,
    publishedVersionId: string,
    requested: string[] | undefined,
    pkg: { app_id: string; developer_id: string },
  ): Promise<InstallRow> {
    const scopes = requested ?? existing.scopes;
    const reauthorize = existing.reauthorization_required_at !== null;
    const narrowed = existing.scopes.some((scope) => !scopes.includes(scope));
    const unchanged =
      existing.version_id === publishedVersionId &&
      existing.pending_version_id === null &&
      !reauthorize &&
      sameSet(scopes, existing.scopes);
    if (unchanged) return existing;
    await this.installs.consent(manager, existing.id, publishedVersionId, scopes);
    // Another version may bring state capabilities the install did not have: their first state at once too.
    if (existing.version_id !== publishedVersionId) await this.jobs.record(manager, firstPollJob(existing.id, publishedVersionId));
    // The refused token family (or one broader than what the user grants now) ends; the runtime gets tokens of a new one.
    if (reauthorize || narrowed) {
      await this.oauth.revokeForInstall(manager, existing.id);
      await this.issueGrant(manager, {
        id: existing.id,
        userId: existing.user_id,
        appId: pkg.app_id,
        developerId: pkg.developer_id,
        scopes,
      });
    }
    return (await this.installs.findById(manager, existing.id))!;
  }

  private async issueGrant(
    manager: Tx,
    install: { id: string; userId: string; appId: string; developerId: string; scopes: string[] },
  ): Promise<void> {
    const grant = await this.oauth.issueDelegated(
      manager,
      { id: install.appId, developerId: install.developerId },
      { userId: install.userId, installId: install.id, scopes: install.scopes },
    );
    await this.installs.setRefreshToken(manager, install.id, this.secretBox.seal(grant.refresh_token));
  }

  /**
   * A version was published: active installs of its package move to it when it
   * adds no capability mode to theirs, else it waits on them for the user's
   * consent. Only a version that is still the published one moves anything
   * (events may arrive out of order). Inside the dispatcher's transaction.
   */
  async followPublished(manager: Tx, versionIds: string[]): Promise<InstallChange[]> {
    if (versionIds.length === 0) return [];
    const moved = await this.installs.followPublished(manager, versionIds);
    // Installs that moved (no consent needed) poll the new version's new state capabilities at once, in one statement.
    await this.jobs.record(
      manager,
      moved.filter((m) => !m.needs_consent).map((m) => firstPollJob(m.id, m.version_id)),
    );
    return this.changes(
      manager,
      moved.map((m) => ({ id: m.id, reason: m.needs_consent ? 'upgrade_available' : 'upgraded' })),
    );
  }

  /** The runtime refused a freshly issued token: the install needs the user to re-authorize it. Only newly marked installs come back. */
  async requireReauthorization(manager: Tx, installIds: string[]): Promise<InstallChange[]> {
    if (installIds.length === 0) return [];
    const marked = await this.installs.markReauthorizationRequired(manager, [...new Set(installIds)]);
    return this.changes(
      manager,
      marked.map((id) => ({ id, reason: 'reauthorization_required' as const })),
    );
  }

  private async changes(manager: Tx, changed: Array<{ id: string; reason: InstallChange['reason'] }>): Promise<InstallChange[]> {
    if (changed.length === 0) return [];
    const rows = await this.installs.findMany(
      manager,
      changed.map((c) => c.id),
    );
    const byId = new Map(rows.map((row) => [row.id, row]));
    return changed.map((c) => ({ user_id: byId.get(c.id)!.user_id, reason: c.reason, install: toInstallDto(byId.get(c.id)!) }));
  }

  async list(userId: string) {
    const rows = await this.installs.listActiveForUser(userId);
    return { installs: rows.map(toInstallDto) };
  }

  /** Uninstalls; removing a removed install answers it again (DELETE is idempotent). */
  async uninstall(userId: string, installId: string) {
    return this.dataSource.transaction(async (manager) => {
      const row = await this.ownedForUpdate(manager, userId, installId);
      if (row.status === 'removed') return toInstallDto(row);
      return toInstallDto(await this.remove(manager, row, 'user_uninstalled'));
    });
  }

  /** Ends an install inside the caller's transaction and emits `install.removed`. */
  async remove(manager: Tx, row: InstallRow, reason: (typeof REMOVAL_REASONS)[number]): Promise<InstallRow> {
    await this.installs.markRemoved(manager, row.id, reason);
    await this.oauth.revokeForInstall(manager, row.id);
    await this.events.record(manager, {
      type: INSTALL_EVENTS.removed,
      payload: { app_id: row.app_id, data: { install_id: row.id, user_id: row.user_id, package_id: row.package_id, reason } },
    });
    return (await this.installs.findById(manager, row.id))!;
  }

  /** Every active install of a user, for areas that end them (soul deletion). */
  async activeFor(manager: Tx, userId: string): Promise<InstallRow[]> {
    return this.installs.activeForUserForUpdate(manager, userId);
  }

  /**
   * What the runtime bridge needs to call a runtime for an active install: the
   * package (runtime URL, suspension, owner), the capabilities of the installed
   * version and whether the developer account is suspended. One install by id,
   * or the user's install of a package; remembered per instance (`InstallTargets`).
   */
  async executionTarget(by: { installId: string } | { userId: string; packageId: string }): Promise<ExecutionTarget | undefined> {
    if ('installId' in by && !isId(by.installId, 'inst')) return undefined;
    if ('packageId' in by && !isId(by.packageId, 'pkg')) return undefined;
    const row = 'installId' in by ? await this.targets.byInstall(by.installId) : await this.targets.byUser(by.userId, by.packageId);
    return row ? (await this.withCapabilities([row]))[0] : undefined;
  }

  /** Active installs (optionally of one user) with their capabilities, for surfaces and the worker's schedulers. */
  async activeTargets(userId?: string): Promise<ExecutionTarget[]> {
    return this.withCapabilities(await this.installs.activeTargets(userId));
  }

  /**
   * A version's capabilities never change once the version exists (a change is
   * a new version), so they are read once per version and kept, frozen and
   * shared, instead of parsing the same descriptors (schemas included) on every
   * runtime call.
   */
  private async withCapabilities(rows: TargetRow[]): Promise<ExecutionTarget[]> {
    const found = new Map<string, CapabilityDescriptor[]>();
    const missing: string[] = [];
    for (const { version_id } of rows) {
      const known = this.versionCapabilities.get(version_id);
      if (known) found.set(version_id, known);
      else if (!missing.includes(version_id)) missing.push(version_id);
    }
    if (missing.length > 0) {
      const read = await this.versions.capabilitiesOf(missing);
      for (const { id, capabilities } of read) {
        deepFreeze(capabilities);
        this.versionCapabilities.set(id, capabilities);
        found.set(id, capabilities);
      }
    }
    return rows.map(({ version_id, ...target }) => ({ ...target, capabilities: found.get(version_id)! }));
  }

  private async ownedForUpdate(manager: Tx, userId: string, installId: string): Promise<InstallRow> {
    const row = isId(installId, 'inst') ? await this.installs.findOwnedForUpdate(manager, userId, installId) : null;
    if (!row) throw new ApiError('NOT_FOUND', `No install ${installId}`);
    return row;
  }
}
