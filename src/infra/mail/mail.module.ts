import { Global, Module } from '@nestjs/common';
import { MailOutbox } from './mail-outbox';

/** The outbox producer, for every role. The sender (MailProcessor) is registered by the worker. */
@Global()
@Module({ providers: [MailOutbox], exports: [MailOutbox] })
export class MailModule {}
