import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { LruMap } from '../../common/cache/lru-map';
import { SecretBox } from '../../common/crypto/secret-box';
import { ApiError } from '../../common/errors/api-error';
import { isId, newId } from '../../common/ids';
import { DomainEvents } from '../events/domain-events';
import { OAuthTokens } from '../providers/oauth-tokens.service';
import { CapabilityDescriptor } from '../packages/capability-descriptor';
import { MarketplaceService } from './marketplace.service';

export const INSTALL_EVENTS = { created: 'install.created', removed: 'install.removed' } as const;
/** Why an install ended (the spec leaves the set open). */
export const REMOVAL_REASONS = ['user_uninstalled', 'soul_deleted', 'package_suspended'] as const;

interface InstallRow {
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

/** An install whose state changed outside the user's request (a published version, a runtime refusing its tokens). */
export interface InstallChange {
  user_id: string;
  reason: 'upgraded' | 'upgrade_available' | 'reauthorization_required';
  install: ReturnType<typeof toInstallDto>;
}

const COLUMNS = `i.id, i.user_id, i.package_id, i.version_id, i.app_id, i.scopes, i.status, i.removed_reason, i.created_at, i.removed_at,
  v.version, p.slug, p.name AS package_name, i.pending_version_id, pv.version AS pending_version, i.reauthorization_required_at,
  CASE WHEN pv.id IS NULL THEN NULL ELSE ARRAY(
    SELECT DISTINCT n->>'type' FROM jsonb_array_elements(pv.capabilities) n
     WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(v.capabilities) o WHERE o->>'type' = n->>'type') ORDER BY 1) END AS pending_new_modes`;
const FROM = `installs i JOIN package_versions v ON v.id = i.version_id JOIN packages p ON p.id = i.package_id
  LEFT JOIN package_versions pv ON pv.id = i.pending_version_id`;

/** An active install as the runtime bridge calls it. */
export interface ExecutionTarget {
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
  capabilities: CapabilityDescriptor[];
}

/**
 * The installed version's capabilities come from `capabilitiesOf`, not from this query. The runtime is the
 * published version's (the reviewed one): a newer draft naming another runtime moves no traffic until it is published.
 */
const TARGET_SELECT = `SELECT i.id AS install_id, i.user_id, i.package_id, p.name AS package_name, i.app_id, p.developer_id, i.scopes,
         live.runtime_url, (p.suspended_at IS NOT NULL) AS package_suspended, (d.status = 'suspended') AS developer_suspended,
         i.version_id, a.tier AS app_tier
    FROM installs i JOIN packages p ON p.id = i.package_id JOIN developers d ON d.id = p.developer_id JOIN apps a ON a.id = i.app_id
    JOIN package_versions live ON live.id = COALESCE(p.published_version_id, i.version_id)`;

type TargetRow = Omit<ExecutionTarget, 'capabilities'> & { version_id: string };

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

const sameSet = (a: string[], b: string[]) => a.length === b.length && a.every((x) => b.includes(x));

/**
 * Capability modes are what a user consents to (the marketplace shows them as
 * "what it can do"); a version whose modes are all among the installed
 * version's needs no new consent (docs/decisions.md, "upgrade rule").
 */
const NEEDS_CONSENT_SQL = `EXISTS (SELECT 1 FROM jsonb_array_elements(nv.capabilities) n
   WHERE NOT EXISTS (SELECT 1 FROM jsonb_array_elements(cur.capabilities) o WHERE o->>'type' = n->>'type'))`;

/**
 * A user's installs of published packages. Each install gets its own OAuth
 * token family for the runtime calls made on the user's behalf; the refresh
 * token is sealed at rest.
 */
@Injectable()
export class InstallsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly marketplace: MarketplaceService,
    private readonly oauth: OAuthTokens,
    private readonly secretBox: SecretBox,
    private readonly events: DomainEvents,
  ) {}

  private readonly versionCapabilities = new LruMap<string, CapabilityDescriptor[]>(2_000);

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
      const [live]: Array<{ version_id: string; version: string }> = await manager.query(
        `SELECT v.id AS version_id, v.version FROM packages p JOIN package_versions v ON v.id = p.published_version_id
          WHERE p.id = $1 AND p.suspended_at IS NULL FOR NO KEY UPDATE OF p`,
        [pkg.id],
      );
      if (!live) throw new ApiError('NOT_FOUND', `No published package ${packageId}`);
      const granted = requested ?? ['capabilities:execute'];
      const id = newId('inst');
      const inserted: Array<{ id: string }> = await manager.query(
        `INSERT INTO installs (id, user_id, package_id, version_id, app_id, scopes) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (user_id, package_id) WHERE status = 'active' DO NOTHING RETURNING id`,
        [id, userId, pkg.id, live.version_id, pkg.app_id, granted],
      );
      if (inserted.length === 0) {
        const [existing]: InstallRow[] = await manager.query(
          `SELECT ${COLUMNS} FROM ${FROM} WHERE i.user_id = $1 AND i.package_id = $2 AND i.status = 'active' FOR UPDATE OF i`,
          [userId, pkg.id],
        );
        return { created: false, install: toInstallDto(await this.consentAgain(manager, existing, live.version_id, requested, pkg)) };
      }
      await this.issueGrant(manager, { id, userId, appId: pkg.app_id, developerId: pkg.developer_id, scopes: granted });
      await manager.query(`UPDATE packages SET last_activity_at = now() WHERE id = $1`, [pkg.id]);
      await this.events.record(manager, {
        type: INSTALL_EVENTS.created,
        payload: {
          app_id: pkg.app_id,
          data: { install_id: id, user_id: userId, package_id: pkg.id, version: live.version, scopes_granted: granted },
        },
      });
      const [row]: InstallRow[] = await manager.query(`SELECT ${COLUMNS} FROM ${FROM} WHERE i.id = $1`, [id]);
      return { created: true, install: toInstallDto(row) };
    });
  }

  /** A repeat install of an active one: the published version, the scopes asked for, and a fresh grant when one is due. */
  private async consentAgain(
    manager: EntityManager,
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
    await manager.query(
      `UPDATE installs SET version_id = $2, pending_version_id = NULL, reauthorization_required_at = NULL, scopes = $3 WHERE id = $1`,
      [existing.id, publishedVersionId, scopes],
    );
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
    const [row]: InstallRow[] = await manager.query(`SELECT ${COLUMNS} FROM ${FROM} WHERE i.id = $1`, [existing.id]);
    return row;
  }

  private async issueGrant(
    manager: EntityManager,
    install: { id: string; userId: string; appId: string; developerId: string; scopes: string[] },
  ): Promise<void> {
    const grant = await this.oauth.issueDelegated(
      manager,
      { id: install.appId, developerId: install.developerId },
      { userId: install.userId, installId: install.id, scopes: install.scopes },
    );
    await manager.query(`UPDATE installs SET refresh_token_encrypted = $2 WHERE id = $1`, [
      install.id,
      this.secretBox.seal(grant.refresh_token),
    ]);
  }

  /**
   * A version was published: active installs of its package move to it when it
   * adds no capability mode to theirs, else it waits on them for the user's
   * consent. Only a version that is still the published one moves anything
   * (events may arrive out of order). Inside the dispatcher's transaction.
   */
  async followPublished(manager: EntityManager, versionIds: string[]): Promise<InstallChange[]> {
    if (versionIds.length === 0) return [];
    // An UPDATE answers [rows, count] through the driver.
    const [moved]: [Array<{ id: string; user_id: string; needs_consent: boolean }>, number] = await manager.query(
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
       RETURNING installs.id, installs.user_id, c.needs_consent`,
      [versionIds],
    );
    return this.changes(
      manager,
      moved.map((m) => ({ id: m.id, reason: m.needs_consent ? 'upgrade_available' : 'upgraded' })),
    );
  }

  /** The runtime refused a freshly issued token: the install needs the user to re-authorize it. Only newly marked installs come back. */
  async requireReauthorization(manager: EntityManager, installIds: string[]): Promise<InstallChange[]> {
    if (installIds.length === 0) return [];
    const [marked]: [Array<{ id: string }>, number] = await manager.query(
      `UPDATE installs SET reauthorization_required_at = now()
        WHERE id = ANY($1::text[]) AND status = 'active' AND reauthorization_required_at IS NULL RETURNING id`,
      [[...new Set(installIds)]],
    );
    return this.changes(
      manager,
      marked.map((m) => ({ id: m.id, reason: 'reauthorization_required' as const })),
    );
  }

  private async changes(manager: EntityManager, changed: Array<{ id: string; reason: InstallChange['reason'] }>): Promise<InstallChange[]> {
    if (changed.length === 0) return [];
    const rows: InstallRow[] = await manager.query(`SELECT ${COLUMNS} FROM ${FROM} WHERE i.id = ANY($1::text[])`, [
      changed.map((c) => c.id),
    ]);
    const byId = new Map(rows.map((row) => [row.id, row]));
    return changed.map((c) => ({ user_id: byId.get(c.id)!.user_id, reason: c.reason, install: toInstallDto(byId.get(c.id)!) }));
  }

  async list(userId: string) {
    const rows: InstallRow[] = await this.dataSource.query(
      `SELECT ${COLUMNS} FROM ${FROM} WHERE i.user_id = $1 AND i.status = 'active' ORDER BY i.created_at, i.id`,
      [userId],
    );
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
  async remove(manager: EntityManager, row: InstallRow, reason: (typeof REMOVAL_REASONS)[number]): Promise<InstallRow> {
    await manager.query(
      `UPDATE installs SET status = 'removed', removed_reason = $2, removed_at = now(), refresh_token_encrypted = NULL WHERE id = $1`,
      [row.id, reason],
    );
    await this.oauth.revokeForInstall(manager, row.id);
    await this.events.record(manager, {
      type: INSTALL_EVENTS.removed,
      payload: { app_id: row.app_id, data: { install_id: row.id, user_id: row.user_id, package_id: row.package_id, reason } },
    });
    const [updated]: InstallRow[] = await manager.query(`SELECT ${COLUMNS} FROM ${FROM} WHERE i.id = $1`, [row.id]);
    return updated;
  }

  /** Every active install of a user, for areas that end them (soul deletion). */
  async activeFor(manager: EntityManager, userId: string): Promise<InstallRow[]> {
    return manager.query(`SELECT ${COLUMNS} FROM ${FROM} WHERE i.user_id = $1 AND i.status = 'active' FOR UPDATE OF i`, [userId]);
  }

  /**
   * What the runtime bridge needs to call a runtime for an active install: the
   * package (runtime URL, suspension, owner), the capabilities of the installed
   * version and whether the developer account is suspended. One install by id,
   * or the user's install of a package.
   */
  async executionTarget(by: { installId: string } | { userId: string; packageId: string }): Promise<ExecutionTarget | undefined> {
    if ('installId' in by && !isId(by.installId, 'inst')) return undefined;
    if ('packageId' in by && !isId(by.packageId, 'pkg')) return undefined;
    const rows: TargetRow[] =
      'installId' in by
        ? await this.dataSource.query(`${TARGET_SELECT} WHERE i.id = $1 AND i.status = 'active'`, [by.installId])
        : await this.dataSource.query(`${TARGET_SELECT} WHERE i.user_id = $1 AND i.package_id = $2 AND i.status = 'active'`, [
            by.userId,
            by.packageId,
          ]);
    return (await this.withCapabilities(rows))[0];
  }

  /** Active installs (optionally of one user) with their capabilities, for surfaces and the worker's schedulers. */
  async activeTargets(userId?: string): Promise<ExecutionTarget[]> {
    const rows: TargetRow[] = userId
      ? await this.dataSource.query(`${TARGET_SELECT} WHERE i.user_id = $1 AND i.status = 'active' ORDER BY i.created_at, i.id`, [userId])
      : await this.dataSource.query(`${TARGET_SELECT} WHERE i.status = 'active' ORDER BY i.created_at, i.id`);
    return this.withCapabilities(rows);
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
      const read: Array<{ id: string; capabilities: CapabilityDescriptor[] }> = await this.dataSource.query(
        `SELECT id, capabilities FROM package_versions WHERE id = ANY($1::text[])`,
        [missing],
      );
      for (const { id, capabilities } of read) {
        deepFreeze(capabilities);
        this.versionCapabilities.set(id, capabilities);
        found.set(id, capabilities);
      }
    }
    return rows.map(({ version_id, ...target }) => ({ ...target, capabilities: found.get(version_id)! }));
  }

  private async ownedForUpdate(manager: EntityManager, userId: string, installId: string): Promise<InstallRow> {
    const [row]: InstallRow[] = isId(installId, 'inst')
      ? await manager.query(`SELECT ${COLUMNS} FROM ${FROM} WHERE i.id = $1 AND i.user_id = $2 FOR UPDATE OF i`, [installId, userId])
      : [];
    if (!row) throw new ApiError('NOT_FOUND', `No install ${installId}`);
    return row;
  }
}
