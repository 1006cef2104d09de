import { Inject, Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { CatalogRepository, CatalogRow, InstallableRow } from './catalog.repository';
import { CatalogQueryDto } from './dto/marketplace.dto';

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

/** The catalog users discover packages in: published, unsuspended packages only. */
@Injectable()
export class MarketplaceService {
  constructor(
    private readonly catalog: CatalogRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async search(query: CatalogQueryDto) {
    const limit = query.limit ?? 20;
    const offset = query.offset ?? 0;
    const filters = { q: query.q?.trim() || null, tier: query.tier ?? null, capabilityType: query.capability_type ?? null };
    const rows = await this.catalog.search(filters, limit, offset);
    // A page past the end has no row to carry the window count.
    let total = rows[0]?.total ?? 0;
    if (rows.length === 0 && offset > 0) total = await this.catalog.count(filters);
    return { packages: rows.map((r) => toListing(r, this.config.publicBaseUrl)), total, limit, offset };
  }

  async bySlug(slug: string) {
    const row = await this.catalog.findBySlug(slug);
    if (!row) throw new ApiError('NOT_FOUND', `No published package ${slug}`);
    return toListing(row, this.config.publicBaseUrl);
  }

  /** The installable version of a package, or NOT_FOUND when it is unpublished or suspended. */
  async installable(packageId: string): Promise<InstallableRow> {
    const row = await this.catalog.findInstallable(packageId);
    if (!row) throw new ApiError('NOT_FOUND', `No published package ${packageId}`);
    return row;
  }
}
