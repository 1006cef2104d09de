import { Type } from '@nestjs/common';
import { AccountDeletionProcessor } from './account-deletion.processor';
import { ExportsProcessor } from './exports.processor';

/** BullMQ consumers of the privacy area, registered by the worker role only. */
export const PRIVACY_PROCESSORS: Type[] = [ExportsProcessor, AccountDeletionProcessor];
