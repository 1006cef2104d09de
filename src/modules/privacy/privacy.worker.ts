import { Type } from '@nestjs/common';

/** BullMQ consumers of the privacy area, registered by the worker role only. */
export const PRIVACY_PROCESSORS: Type[] = [];
