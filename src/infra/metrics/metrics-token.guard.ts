import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../common/errors/api-error';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';

const CHALLENGE = { 'WWW-Authenticate': 'Bearer' };

/**
 * `GET /metrics` on the public api port (docs/decisions.md "Metrics"): queue sizes and backlogs are not for everyone,
 * so the caller presents `METRICS_TOKEN` (a scraper's own credential, which can do nothing else) or `OPERATOR_TOKEN`.
 * With neither configured the route is closed; the worker's health port serves the same metrics without a token.
 */
@Injectable()
export class MetricsTokenGuard implements CanActivate {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const accepted = [this.config.metricsToken, this.config.operatorToken].filter((token): token is string => !!token);
    if (accepted.length === 0) {
      throw new ApiError('FORBIDDEN', 'Metrics are closed on this port: set METRICS_TOKEN, or scrape the worker health port');
    }
    const match = /^Bearer (.+)$/.exec(context.switchToHttp().getRequest<FastifyRequest>().headers.authorization ?? '');
    if (!match) throw new ApiError('UNAUTHORIZED', 'Missing bearer token', CHALLENGE);
    const given = Buffer.from(match[1]);
    // Every configured token is compared, so the answer's timing does not tell which one came close.
    const valid = accepted
      .map((token) => Buffer.from(token))
      .filter((wanted) => wanted.length === given.length && timingSafeEqual(wanted, given));
    if (valid.length === 0) throw new ApiError('UNAUTHORIZED', 'The metrics token is not valid', CHALLENGE);
    return true;
  }
}
