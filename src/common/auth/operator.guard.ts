import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { ProblemError } from '../errors/problem-error';

/** Guards the operator API with the `OPERATOR_TOKEN` bearer; closed when it is unset. */
@Injectable()
export class OperatorGuard implements CanActivate {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const expected = this.config.operatorToken;
    if (!expected) throw new ProblemError('insufficient_scope', 'The operator API is disabled: OPERATOR_TOKEN is not configured');
    const header = context.switchToHttp().getRequest<FastifyRequest>().headers.authorization ?? '';
    const match = /^Bearer (.+)$/.exec(header);
    if (!match) throw new ProblemError('invalid_token', 'Missing bearer token', {}, { 'WWW-Authenticate': 'Bearer' });
    const given = Buffer.from(match[1]);
    const wanted = Buffer.from(expected);
    if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) {
      throw new ProblemError('invalid_token', 'The operator token is not valid', {}, { 'WWW-Authenticate': 'Bearer' });
    }
    return true;
  }
}
