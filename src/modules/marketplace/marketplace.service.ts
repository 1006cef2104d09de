import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { CapabilityDescriptor } from '../packages/capability-descriptor';
import { CatalogQueryDto } from './dto/marketplace.dto';

interface CatalogRow {
  id: string;
  slug: string;
  name: string;
  description: string;
  risk_tier: string;
  version_id: string;
  version: string;
  capabilities: CapabilityDescriptor[];
  published_at: Date;
  total?: number;
}

/** Only what a user choosing a package needs; schemas stay on the platform side. */
function toListing(row: CatalogRow, baseUrl: string) {
  return {
    id: row.id,
    slug: row.slug,
    name: row.name,
    description: row.description,
    riskTier: row.risk_tier,
    versionId: row.version_id,
    version: row.version,
    capabilities: row.capabilities.map((c) => ({
      name: c.name,
      type: c.type,
      description: c.description,
      surfaceGuidance: c.surfaceGuidance,
    })),
    publishedAt: row.published_at.toISOString(),
    catalogUrl: `${baseUrl}/v1/marketplace/packages/${row.slug}`,
  };
}

const CATALOG = `
  SELECT p.id, p.slug, p.name, p.description, p.risk_tier, v.id AS version_id, v.version, v.capabilities, v.published_at
    FROM packages p JOIN package_versions v ON v.id = p.published_version_id
   WHERE p.suspended_at IS NULL`;

/** The catalog narrowed by $1 text, $2 tier and $3 capability type (each optional). */
const FILTERED = `${CATALOG}
   AND ($1::text IS NULL OR p.name ILIKE '%' || $1 || '%' OR p.description ILIKE '%' || $1 || '%')
   AND ($2::text IS NULL OR p.risk_tier = $2)
   AND ($3::text IS NULL OR v.capabilities @> jsonb_build_array(jsonb_build_object('type', $3::text)))`;

/** The catalog users discover packages in: published, unsuspended packages only. */
@Injectable()
export class MarketplaceService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async search(query: CatalogQueryDto) {
    const limit = query.limit ?? 20;
    const offset = query.offset ?? 0;
    const filters = [query.q?.trim() || null, query.tier ?? null, query.capability_type ?? null];
    const rows: CatalogRow[] = await this.dataSource.query(
      `SELECT *, count(*) OVER ()::int AS total FROM (${FILTERED}) catalog ORDER BY name, id LIMIT $4 OFFSET $5`,
      [...filters, limit, offset],
    );
    // A page past the end has no row to carry the window count.
    let total = rows[0]?.total ?? 0;
    if (rows.length === 0 && offset > 0) {
      const counted: Array<{ total: number }> = await this.dataSource.query(
        `SELECT count(*)::int AS total FROM (${FILTERED}) catalog`,
        filters,
      );
      total = counted[0].total;
    }
    return { packages: rows.map((r) => toListing(r, this.config.publicBaseUrl)), total, limit, offset };
  }

  async bySlug(slug: string) {
    const [row]: CatalogRow[] = await this.dataSource.query(`${CATALOG} AND p.slug = $1`, [slug]);
    if (!row) throw new ApiError('NOT_FOUND', `No published package ${slug}`);
    return toListing(row, this.config.publicBaseUrl);
  }

  /** The installable version of a package, or NOT_FOUND when it is unpublished or suspended. */
  async installable(
    packageId: string,
  ): Promise<{ id: string; app_id: string; developer_id: string; version_id: string; version: string; app_scopes: string[] }> {
    const [row]: Array<{ id: string; app_id: string; developer_id: string; version_id: string; version: string; app_scopes: string[] }> =
      await this.dataSource.query(
        `SELECT p.id, p.app_id, p.developer_id, v.id AS version_id, v.version, a.scopes AS app_scopes
         FROM packages p JOIN package_versions v ON v.id = p.published_version_id JOIN apps a ON a.id = p.app_id
        WHERE p.id = $1 AND p.suspended_at IS NULL`,
        [packageId],
      );
    if (!row) throw new ApiError('NOT_FOUND', `No published package ${packageId}`);
    return row;
  }
}
