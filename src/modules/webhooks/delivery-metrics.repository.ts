import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository } from '../../infra/database/sql-repository';

/** One endpoint's deliveries created in a window, by status. */
export interface EndpointDeliveryCounts {
  endpoint_id: string;
  is_primary: boolean;
  deliveries: number;
  delivered: number;
  failed: number;
  pending: number;
  attempts: number;
}

/**
 * Webhook delivery counts per endpoint for the provider metrics: a read of `webhook_deliveries` through its
 * per-endpoint log index `(endpoint_id, created_at DESC)`, one range per endpoint of the app.
 */
@Injectable()
export class DeliveryMetricsRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /**
   * Every endpoint of the app, primary first, with the deliveries of events created at or after `from` (zeros for
   * none). Test events and endpoint checks are left out: a check signed with a throwaway secret is meant to be refused.
   */
  async perEndpoint(appId: string, from: Date): Promise<EndpointDeliveryCounts[]> {
    return this.rows<EndpointDeliveryCounts>(
      `SELECT e.id AS endpoint_id, e.is_primary,
              count(d.id)::integer AS deliveries,
              count(d.id) FILTER (WHERE d.status = 'delivered')::integer AS delivered,
              count(d.id) FILTER (WHERE d.status = 'failed')::integer AS failed,
              count(d.id) FILTER (WHERE d.status = 'pending')::integer AS pending,
              coalesce(sum(d.attempt_count), 0)::integer AS attempts
         FROM webhook_endpoints e
         LEFT JOIN webhook_deliveries d ON d.endpoint_id = e.id AND d.created_at >= $2 AND NOT d.test
        WHERE e.app_id = $1
        GROUP BY e.id
        ORDER BY e.is_primary DESC, e.created_at, e.id`,
      [appId, from],
    );
  }
}
