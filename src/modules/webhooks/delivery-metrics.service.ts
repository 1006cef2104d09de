import { Injectable } from '@nestjs/common';
import { DEFAULT_METRIC_WINDOW, MetricWindow, windowBuckets } from '../../common/metrics/metric-windows';
import { AppsService } from '../providers/apps.service';
import { PlatformPrincipal } from '../providers/auth/platform-principal';
import { DeliveryMetricsRepository } from './delivery-metrics.repository';

/**
 * Webhook delivery success per endpoint over a metrics window (docs/metrics.md): of the deliveries created in
 * the window, the share that succeeded among those settled (delivered or failed for good); pending ones, still
 * retrying, wait for their outcome.
 */
@Injectable()
export class DeliveryMetrics {
  constructor(
    private readonly repository: DeliveryMetricsRepository,
    private readonly apps: AppsService,
  ) {}

  async forApp(principal: PlatformPrincipal, appId: string, window: MetricWindow = DEFAULT_METRIC_WINDOW) {
    await this.apps.owned(principal, appId);
    const { from, bucketMs, buckets } = windowBuckets(window);
    const endpoints = await this.repository.perEndpoint(appId, from);
    return {
      app_id: appId,
      window,
      from: from.toISOString(),
      to: new Date(from.getTime() + buckets * bucketMs).toISOString(),
      endpoints: endpoints.map((e) => {
        const settled = e.delivered + e.failed;
        return { ...e, success_rate: settled === 0 ? null : Math.round((e.delivered / settled) * 10_000) / 10_000 };
      }),
    };
  }
}
