import { Global, Module } from '@nestjs/common';
import { MailOutbox } from './mail-outbox';
import { MailOutboxRepository } from './mail-outbox.repository';

/** The outbox producer, for every role. The sender (MailProcessor) is registered by the worker. */
@Global()
@Module({ providers: [MailOutbox, MailOutboxRepository], exports: [MailOutbox, MailOutboxRepository] })
export class MailModule {}
