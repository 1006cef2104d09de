import { SetMetadata } from '@nestjs/common';

export const DOMAIN_EVENT_SUBSCRIBER = Symbol('DOMAIN_EVENT_SUBSCRIBER');

/**
 * Marks a provider method as a subscriber of domain events of `type`
 * (`'*'` for all). It runs in the worker role inside the dispatcher's
 * transaction and receives `(event, manager)`; rows it writes with `manager`
 * commit together with the event being marked dispatched. Keep it quick and
 * free of outside I/O: enqueue a job for slow work.
 */
export const OnDomainEvent = (type: string): MethodDecorator => SetMetadata(DOMAIN_EVENT_SUBSCRIBER, type);
