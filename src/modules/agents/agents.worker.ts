import { Type } from '@nestjs/common';
import { AgentsProcessor } from './agents.processor';

/** BullMQ consumers of the agents area, registered by the worker role only. */
export const AGENTS_PROCESSORS: Type[] = [AgentsProcessor];
