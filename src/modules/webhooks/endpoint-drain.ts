import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { JobOutbox } from '../../infra/queue/job-outbox';
import { AttemptRecord, CLAIM_LEASE_MS, ClaimedDelivery, DeliveryAttempts, Endpoint } from './delivery-attempts';
import { EndpointLease } from './endpoint-lease';
import { DRAIN_JOB } from './webhook-delivery.queue';

/** How long the drainer's lease lasts without renewal: the longest delivery timeout plus a margin. */
const LEASE_MS = CLAIM_LEASE_MS;
/** Renewed this often while draining. */
const RENEW_EVERY_MS = 10_000;
/** Deliveries claimed per statement, per slot of the endpoint's concurrency. */
const CLAIM_PER_SLOT = 8;
/** Outcomes written per statement (a round's last ones are written when it ends). */
const RECORD_BATCH = 32;
/** A drain gives its worker slot back after this long and queues its own continuation, so one endpoint cannot hold a worker for ever. */
const DRAIN_MAX_MS = 20_000;

export type DrainResult =
  { outcome: 'busy' } | { outcome: 'drained'; sent: number; ended: number; nextDueAt: string | null; continued: boolean };

/**
 * Sends an endpoint's due deliveries (worker role; docs/decisions.md,
 * "Webhook delivery"). One drain per endpoint runs at a time across every
 * worker (EndpointLease); it keeps `WEBHOOK_ENDPOINT_CONCURRENCY` requests in
 * flight, claims due deliveries in batches and writes their outcomes in
 * batches, until none is due. Before it ends it makes sure a drain job waits
 * for the endpoint's next due delivery (a retry, or an attempt whose drainer
 * died), so nothing pending is ever without a job to send it; the job
 * completes only after that, and BullMQ runs it again if it fails before.
 */
@Injectable()
export class EndpointDrain {
  constructor(
    private readonly attempts: DeliveryAttempts,
    private readonly lease: EndpointLease,
    private readonly jobs: JobOutbox,
    @InjectDataSource() private readonly dataSource: DataSource,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async drain(endpointId: string, holder: string): Promise<DrainResult> {
    if (!(await this.lease.takeOrNote(endpointId, holder, LEASE_MS))) return { outcome: 'busy' };
    const renewal = setInterval(() => void this.lease.renew(endpointId, holder, LEASE_MS).catch(() => undefined), RENEW_EVERY_MS);
    renewal.unref();
    const deadline = Date.now() + DRAIN_MAX_MS;
    const totals = { sent: 0, ended: 0 };
    let continued = false;
    try {
      for (;;) {
        await this.round(endpointId, deadline, totals);
        if (Date.now() >= deadline) {
          await this.lease.release(endpointId, holder);
          continued = true;
          break;
        }
        if (!(await this.lease.releaseUnlessMore(endpointId, holder, LEASE_MS))) break;
      }
    } catch (error) {
      // The job fails and is run again; the lease is given up so that run (or another) can take it.
      await this.lease.release(endpointId, holder).catch(() => undefined);
      throw error;
    } finally {
      clearInterval(renewal);
    }
    const nextDue = await this.attempts.nextDue(endpointId);
    if (nextDue) await this.wakeAt(endpointId, nextDue);
    return { outcome: 'drained', ...totals, nextDueAt: nextDue?.toISOString() ?? null, continued };
  }

  /** Sends until nothing is due (or the deadline passes): claims ahead, keeps the endpoint's concurrency busy, records in batches. */
  private async round(endpointId: string, deadline: number, totals: { sent: number; ended: number }): Promise<void> {
    const endpoint = await this.attempts.endpoint(endpointId);
    if ('unusable' in endpoint) {
      totals.ended += await this.attempts.failDue(endpointId, endpoint.unusable);
      return;
    }
    const concurrency = this.config.webhooks.endpointConcurrency;
    const claimSize = concurrency * CLAIM_PER_SLOT;
    const ready: ClaimedDelivery[] = [];
    let exhausted = false;
    let claiming: Promise<void> | null = null;
    const claimMore = (): Promise<void> =>
      (claiming ??= this.attempts
        .claim(endpointId, claimSize)
        .then((rows) => {
          ready.push(...rows);
          if (rows.length < claimSize || Date.now() >= deadline) exhausted = true;
        })
        .finally(() => {
          claiming = null;
        }));

    let pending: AttemptRecord[] = [];
    const writes: Array<Promise<void>> = [];
    const flush = () => {
      if (pending.length === 0) return;
      const batch = pending;
      pending = [];
      const written = this.write(endpoint, batch);
      written.catch(() => undefined); // awaited below; a round that fails first must not leave it unhandled
      writes.push(written);
    };

    const sender = async (): Promise<void> => {
      for (;;) {
        // Claim the next batch while half of this one is still to send, so the senders never wait for a claim.
        if (!exhausted && ready.length <= claimSize / 2) void claimMore().catch(() => undefined);
        if (ready.length === 0) {
          if (exhausted && !claiming) return;
          await claimMore();
          if (ready.length === 0) return;
        }
        const delivery = ready.shift()!;
        // Not `pending.push(await …)`: that would push into the array a flush handed off during the await.
        const outcome = await this.attempts.send(endpoint, delivery);
        pending.push(outcome);
        totals.sent += 1;
        if (pending.length >= RECORD_BATCH) flush();
      }
    };
    await Promise.all(Array.from({ length: concurrency }, sender));
    flush();
    await Promise.all(writes);
  }

  /**
   * A drain of the endpoint when its next delivery is due, through the job
   * outbox like every job (the relay's sweep adds it again if Redis loses it).
   * Recorded before this drain's job completes: if it fails, the job fails and
   * runs again, so a pending delivery is never without a drain to send it.
   */
  private async wakeAt(endpointId: string, at: Date): Promise<void> {
    const delay = Math.max(0, at.getTime() - Date.now());
    await this.dataSource.transaction((manager) =>
      this.jobs.record(manager, { ...DRAIN_JOB, data: { endpointId }, opts: { ...DRAIN_JOB.opts, delay } }),
    );
  }

  private async write(endpoint: Endpoint, records: AttemptRecord[]): Promise<void> {
    await this.attempts.record(records);
    if (records.some((r) => r.outcome !== 'delivered') || endpoint.failingSince) {
      await this.attempts.trackHealth(endpoint, records);
    }
  }
}
