import { Type } from '@nestjs/common';
import { RealtimeSupervisor } from './realtime-supervisor';
import { RuntimeBridgeProcessor } from './runtime-bridge.processor';

/** Queue consumers of the runtime bridge (worker role only). */
export const RUNTIME_BRIDGE_PROCESSORS: Type[] = [RuntimeBridgeProcessor];
/** Long-running worker services of the runtime bridge: the realtime stream supervisor. */
export const RUNTIME_BRIDGE_SUPERVISORS: Type[] = [RealtimeSupervisor];
