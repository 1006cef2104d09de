import { Type } from '@nestjs/common';
import { PendingActionFanout } from './action-fanout.subscriber';
import { MessageFanout } from './message-fanout.subscriber';

/**
 * Domain event subscribers of the gateway (worker role only): they publish committed messages and pending
 * confirmations to the Redis bus, from which every api instance's sockets deliver them.
 */
export const GATEWAY_SUBSCRIBERS: Type[] = [MessageFanout, PendingActionFanout];
