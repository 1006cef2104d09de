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
}

const COLUMNS =
  'i.id, i.user_id, i.package_id, i.version_id, i.app_id, i.scopes, i.status, i.removed_reason, i.created_at, i.removed_at, v.version, p.slug';
const FROM = 'installs i JOIN package_versions v ON v.id = i.version_id JOIN packages p ON p.id = i.package_id';

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
  capabilities: CapabilityDescriptor[];
}

/**
 * The installed version's capabilities come from `capabilitiesOf`, not from this query. The runtime is the
 * published version's (the reviewed one): a newer draft naming another runtime moves no traffic until it is published.
 */
const TARGET_SELECT = `SELECT i.id AS install_id, i.user_id, i.package_id, p.name AS package_name, i.app_id, p.developer_id, i.scopes,
         live.runtime_url, (p.suspended_at IS NOT NULL) AS package_suspended, (d.status = 'suspended') AS developer_suspended,
         i.version_id
    FROM installs i JOIN packages p ON p.id = i.package_id JOIN developers d ON d.id = p.developer_id
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
    version: row.version,
    scopes: row.scopes,
    status: row.status,
    removed_reason: row.removed_reason,
    created_at: row.created_at.toISOString(),
    removed_at: row.removed_at?.toISOString() ?? null,
  };
}

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

  /** Installs the published version; installing an installed package answers the existing install. */
  async install(
    userId: string,
    packageId: string,
    scopes: string[] = ['capabilities:execute'],
  ): Promise<{ created: boolean; install: ReturnType<typeof toInstallDto> }> {
    const pkg = await this.marketplace.installable(packageId);
    // A user can only grant what the app itself holds (the authorize flow checks the same).
    const beyondApp = scopes.filter((scope) => !pkg.app_scopes.includes(scope));
    if (beyondApp.length > 0) {
      throw new ApiError(
        'BAD_REQUEST',
        `scope ${beyondApp.join(', ')} cannot be granted: the app of this package does not hold it; it holds ${pkg.app_scopes.join(' ') || 'no scope'}`,
      );
    }
    return this.dataSource.transaction(async (manager) => {
      const id = newId('inst');
      const inserted: Array<{ id: string }> = await manager.query(
        `INSERT INTO installs (id, user_id, package_id, version_id, app_id, scopes) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (user_id, package_id) WHERE status = 'active' DO NOTHING RETURNING id`,
        [id, userId, pkg.id, pkg.version_id, pkg.app_id, scopes],
      );
      if (inserted.length === 0) {
        const [existing]: InstallRow[] = await manager.query(
          `SELECT ${COLUMNS} FROM ${FROM} WHERE i.user_id = $1 AND i.package_id = $2 AND i.status = 'active'`,
          [userId, pkg.id],
        );
        return { created: false, install: toInstallDto(existing) };
      }
      const grant = await this.oauth.issueDelegated(
        manager,
        { id: pkg.app_id, developerId: pkg.developer_id },
        { userId, installId: id, scopes },
      );
      await manager.query(`UPDATE installs SET refresh_token_encrypted = $2 WHERE id = $1`, [id, this.secretBox.seal(grant.refresh_token)]);
      await manager.query(`UPDATE packages SET last_activity_at = now() WHERE id = $1`, [pkg.id]);
      await this.events.record(manager, {
        type: INSTALL_EVENTS.created,
        payload: {
          app_id: pkg.app_id,
          data: { install_id: id, user_id: userId, package_id: pkg.id, version: pkg.version, scopes_granted: scopes },
        },
      });
      const [row]: InstallRow[] = await manager.query(`SELECT ${COLUMNS} FROM ${FROM} WHERE i.id = $1`, [id]);
      return { created: true, install: toInstallDto(row) };
    });
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
