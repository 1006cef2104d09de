import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository } from '../../infra/database/sql-repository';
import { CapabilityDescriptor } from '@soul-service/rules';

/** A published package as the catalog lists it. */
export interface CatalogRow {
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

/** The published version of a package that an install takes, with the scopes its app holds. */
export interface InstallableRow {
  id: string;
  app_id: string;
  developer_id: string;
  version_id: string;
  version: string;
  app_scopes: string[];
}

export interface CatalogFilters {
  q: string | null;
  tier: string | null;
  capabilityType: string | null;
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

/**
 * The marketplace's read model: published, unsuspended packages. It owns no
 * table and writes nothing; it reads `packages` and `package_versions` (the
 * packages area's) and `apps` (the providers') in single statements.
 */
@Injectable()
export class CatalogRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /** One page of the filtered catalog, by name; each row carries the filtered total (`count(*) OVER ()`). */
  search(filters: CatalogFilters, limit: number, offset: number): Promise<CatalogRow[]> {
    return this.rows<CatalogRow>(
      `SELECT *, count(*) OVER ()::int AS total FROM (${FILTERED}) catalog ORDER BY name, id LIMIT $4 OFFSET $5`,
      [filters.q, filters.tier, filters.capabilityType, limit, offset],
    );
  }

  /** How many packages the filters match (for a page past the end, which has no row to carry the window count). */
  async count(filters: CatalogFilters): Promise<number> {
    const [counted] = await this.rows<{ total: number }>(`SELECT count(*)::int AS total FROM (${FILTERED}) catalog`, [
      filters.q,
      filters.tier,
      filters.capabilityType,
    ]);
    return counted.total;
  }

  findBySlug(slug: string): Promise<CatalogRow | null> {
    return this.first<CatalogRow>(`${CATALOG} AND p.slug = $1`, [slug]);
  }

  findInstallable(packageId: string): Promise<InstallableRow | null> {
    return this.first<InstallableRow>(
      `SELECT p.id, p.app_id, p.developer_id, v.id AS version_id, v.version, a.scopes AS app_scopes
         FROM packages p JOIN package_versions v ON v.id = p.published_version_id JOIN apps a ON a.id = p.app_id
        WHERE p.id = $1 AND p.suspended_at IS NULL`,
      [packageId],
    );
  }
}
