import { Type } from '@nestjs/common';
import { ConformanceProcessor } from './conformance.processor';

/** BullMQ consumers of the conformance area (full runs), registered by the worker role only. */
export const CONFORMANCE_PROCESSORS: Type[] = [ConformanceProcessor];
