import { SetMetadata } from '@nestjs/common';

export const DOMAIN_EVENT_SUBSCRIBER = Symbol('DOMAIN_EVENT_SUBSCRIBER');

/**
 * Marks a provider method as a subscriber of domain events of `type` (`'*'`
 * for all). It runs in the worker role inside the dispatcher's transaction
 * and receives `(events, manager)`: every claimed event of its type in the
 * batch, oldest first. Work it records with `manager` (rows, jobs in the job
 * outbox) commits together with the events being marked dispatched. Do
 * set-based work (one query for the batch, one multi-row insert), keep it
 * quick and free of outside I/O: record a job for slow work. If it throws,
 * the batch is rolled back and its events are dispatched one by one, so the
 * failing event is retried alone with backoff.
 */
export const OnDomainEvents = (type: string): MethodDecorator => SetMetadata(DOMAIN_EVENT_SUBSCRIBER, type);
