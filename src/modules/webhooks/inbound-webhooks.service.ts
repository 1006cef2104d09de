import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ProblemError } from '../../common/errors/problem-error';
import { newId } from '../../common/ids';
import { isObject } from '../../common/json';
import { RateDecision, RateLimits } from '../../common/rate-limit/rate-limits.service';
import { DomainEvents } from '../events/domain-events';
import { PackagesService } from '../packages/packages.service';
import { cachedValidatorFor } from '@soul-service/rules';
import { AppsService } from '../providers/apps.service';
import { tierLimits } from '../../common/app-tiers';
import { InboundWebhookEventsRepository } from './inbound-webhook-events.repository';
import { WebhookProfiles } from './webhook-profiles.service';
import { verifySpecSignature } from './webhook-signature';

/** Inbound events older (or further in the future) than this are refused: replay protection. */
export const INBOUND_MAX_AGE_MS = 5 * 60_000;
/**
 * Bounds of the envelope fields the registered schema does not govern (it governs `data` only): a user id
 * has the `usr_` shape (22 characters of body, 64 leaves room for a provider's own reference), an action is a verb.
 */
export const INBOUND_FIELD_LIMITS = { event: 200, userId: 64, action: 100 } as const;
/** Outbox event type that hands an accepted provider event to processing (surfaces, gateway). */
export const PROVIDER_EVENT_RECEIVED = 'provider_event.received';

export interface InboundAck {
  status: 'accepted';
  event_id: string;
  processed_at: string;
}

/**
 * Signed inbound webhooks from provider runtimes (spec, Webhook mode):
 * signature over the raw bytes first, then the registered event type and its
 * schema, then de-duplication by app, event, timestamp and body hash.
 */
@Injectable()
export class InboundWebhooks {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly inbound: InboundWebhookEventsRepository,
    private readonly profiles: WebhookProfiles,
    private readonly packages: PackagesService,
    private readonly events: DomainEvents,
    private readonly apps: AppsService,
    private readonly limits: RateLimits,
  ) {}

  /**
   * `report` receives the webhook-events window after it counted this event,
   * for the `X-RateLimit-*` headers, also when it refuses it.
   */
  async receive(
    appId: string,
    rawBody: Buffer | undefined,
    signature: string | undefined,
    report: (decision: RateDecision) => void = () => undefined,
  ): Promise<InboundAck> {
    await this.verifySignature(appId, rawBody, signature);
    await this.countEvent(appId, report);
    const body = parse(rawBody!);
    for (const field of ['event', 'action', 'timestamp', 'userId'] as const) {
      if (body[field] === undefined || body[field] === null) throw new ProblemError('missing_field', `${field} is required`, { field });
      if (typeof body[field] !== 'string' || body[field] === '')
        throw new ProblemError('invalid_format', `${field} must be a non-empty string`, { field });
    }
    for (const [field, limit] of Object.entries(INBOUND_FIELD_LIMITS)) {
      if ((body[field] as string).length > limit)
        throw new ProblemError('invalid_format', `${field} must be at most ${limit} characters`, { field });
    }
    if (body.data === undefined) throw new ProblemError('missing_field', 'data is required', { field: 'data' });
    if (!isObject(body.data)) {
      throw new ProblemError('invalid_format', 'data must be an object', { field: 'data' });
    }
    const occurredAt = Date.parse(body.timestamp as string);
    if (Number.isNaN(occurredAt) || !/^\d{4}-\d{2}-\d{2}T/.test(body.timestamp as string)) {
      throw new ProblemError('invalid_format', 'timestamp must be an ISO 8601 date-time', { field: 'timestamp' });
    }
    if (Math.abs(Date.now() - occurredAt) > INBOUND_MAX_AGE_MS) {
      throw new ProblemError('invalid_format', 'timestamp is more than 5 minutes away from now; events are accepted for 5 minutes only', {
        field: 'timestamp',
      });
    }
    const registered = (await this.packages.webhookEventTypes(appId)).get(body.event as string);
    if (!registered)
      throw new ProblemError('invalid_format', `event "${String(body.event)}" is not registered by this app's packages`, {
        field: 'event',
      });
    const check = cachedValidatorFor(registered.schema)(body.data);
    if (!check.valid) {
      throw new ProblemError(
        'invalid_format',
        `data does not match the schema of ${registered.type}: ${check.errors.slice(0, 5).join('; ')}`,
        {
          field: dataField(check.errors[0] ?? ''),
          errors: check.errors.slice(0, 20).map((message) => ({ field: dataField(message), message, code: 'invalid_format' })),
        },
      );
    }

    const bodyHash = createHash('sha256').update(rawBody!).digest('hex');
    return this.dataSource.transaction(async (manager) => {
      const id = newId('evt');
      const event = {
        id,
        appId,
        eventType: body.event as string,
        action: body.action as string,
        userId: body.userId as string,
        occurredAt: new Date(occurredAt),
        bodySha256: bodyHash,
        data: body.data,
      };
      const inserted = await this.inbound.insertOnce(manager, event);
      if (!inserted) {
        // A repeat: acknowledged with the first event's id, not processed again.
        const first = await this.inbound.findSame(manager, event);
        return { status: 'accepted' as const, event_id: first.id, processed_at: first.receivedAt.toISOString() };
      }
      await this.events.record(manager, {
        type: PROVIDER_EVENT_RECEIVED,
        payload: {
          app_id: appId,
          event_id: id,
          event: body.event,
          action: body.action,
          user_id: body.userId,
          occurred_at: body.timestamp,
          data: body.data,
        },
      });
      return { status: 'accepted' as const, event_id: id, processed_at: inserted.receivedAt.toISOString() };
    });
  }

  /**
   * Webhook events per minute by the app's tier (spec: 200 / 2,000 / 20,000),
   * counted in Redis across instances. Every signed event counts, valid or
   * not, as any request does; an unsigned one never reaches here (401).
   */
  private async countEvent(appId: string, report: (decision: RateDecision) => void): Promise<void> {
    const tier = await this.apps.tierOf(appId);
    const decision = await this.limits.consumeWindow('webhook_events', appId, tierLimits(tier).webhookEventsPerMinute, 60);
    report(decision);
    if (!decision.allowed) {
      throw new ProblemError(
        'rate_limit_exceeded',
        `More than ${decision.limit} webhook events per minute for an app on the ${tier} tier; retry after ${decision.retryAfter} seconds`,
        {},
        { 'Retry-After': String(decision.retryAfter) },
      );
    }
  }

  /** 401 for a missing header, a header without `sha256=`, or a mismatch with the current (or, in grace, previous) secret. */
  private async verifySignature(appId: string, rawBody: Buffer | undefined, signature: string | undefined): Promise<void> {
    if (!signature) throw new ProblemError('invalid_signature', 'X-Signature-256 header is required');
    if (!signature.startsWith('sha256=')) throw new ProblemError('invalid_signature', 'X-Signature-256 must have the form sha256=<hex>');
    const profile = await this.profiles.find(appId);
    if (!profile || !rawBody) throw new ProblemError('invalid_signature', 'X-Signature-256 does not match the request body');
    const secrets = this.profiles.signingSecrets(profile);
    const ok = [secrets.current, secrets.previous].some((secret) => secret !== null && verifySpecSignature(secret, rawBody, signature));
    if (!ok) throw new ProblemError('invalid_signature', 'X-Signature-256 does not match the request body');
  }
}

function parse(raw: Buffer): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(raw.toString('utf8'));
    if (isObject(value)) return value;
  } catch {
    /* answered below */
  }
  throw new ProblemError('bad_request', 'The body must be a JSON object');
}

/** The field of a validator message (`/amount must be number` → `data.amount`), as problem details name fields. */
function dataField(message: string): string {
  return `data${message.startsWith('/') ? message.split(' ')[0].replace(/\//g, '.') : ''}`;
}
