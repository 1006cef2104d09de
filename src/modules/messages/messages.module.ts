import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessModule } from '../access/access.module';
import { ContactsModule } from '../contacts/contacts.module';
import { MessageRecipientEntity } from './entities/message-recipient.entity';
import { MessageEntity } from './entities/message.entity';
import { ConversationsController } from './conversations.controller';
import { ConversationsRepository } from './conversations.repository';
import { ConversationsService } from './conversations.service';
import { ContactSends } from './contact-sends.service';
import { MessageReceipts } from './message-receipts.service';
import { MessagesController } from './messages.controller';
import { MessagesPersonalData } from './messages.personal-data';
import { MessagesRepository } from './messages.repository';
import { MessagesService } from './messages.service';

/** Sending and reading messages. Contacts and groups come from ContactsModule. */
@Module({
  imports: [TypeOrmModule.forFeature([MessageEntity, MessageRecipientEntity]), AccessModule, ContactsModule],
  controllers: [MessagesController, ConversationsController],
  providers: [
    MessagesService,
    ContactSends,
    MessageReceipts,
    MessagesPersonalData,
    ConversationsService,
    MessagesRepository,
    ConversationsRepository,
  ],
  exports: [MessagesService, MessageReceipts, MessagesRepository],
})
export class MessagesModule {}
