import { Type } from '@nestjs/common';
import { PasswordResetsProcessor } from './password-resets.processor';

/** BullMQ consumers of the providers area (password reset links), registered by the worker role only. */
export const PROVIDERS_PROCESSORS: Type[] = [PasswordResetsProcessor];
