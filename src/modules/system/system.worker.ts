import { Type } from '@nestjs/common';
import { SystemProcessor } from './system.processor';

/** BullMQ consumers of the system area (retention purge), registered by the worker role only. */
export const SYSTEM_PROCESSORS: Type[] = [SystemProcessor];
