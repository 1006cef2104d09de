import { Type } from '@nestjs/common';
import { MailProcessor } from './mail.processor';

/** BullMQ consumer of the mail outbox (the sender), registered by the worker role only. */
export const MAIL_PROCESSORS: Type[] = [MailProcessor];
