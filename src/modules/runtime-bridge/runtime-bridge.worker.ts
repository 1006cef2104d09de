import { Type } from '@nestjs/common';
import { WebhookEventRouter } from './webhook-event-router';
import { RealtimeSupervisor } from './realtime-supervisor';
import { RuntimeBridgeProcessor } from './runtime-bridge.processor';

/** Queue consumers of the runtime bridge (worker role only). */
export const RUNTIME_BRIDGE_PROCESSORS: Type[] = [RuntimeBridgeProcessor];
/** Long-running worker services of the runtime bridge: the realtime stream supervisor. */
export const RUNTIME_BRIDGE_SUPERVISORS: Type[] = [RealtimeSupervisor];

/** Domain event subscribers of the bridge (webhook mode: pushed provider events become capability data). */
export const RUNTIME_BRIDGE_SUBSCRIBERS: Type[] = [WebhookEventRouter];
