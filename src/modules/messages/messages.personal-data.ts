import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { PersonalDataSection, PersonalDataSource } from '../../common/personal-data';
import { MessagesService } from './messages.service';

/**
 * `messages` section of the export: `sent` (with recipients) and `received`
 * (from linked users). Messages are kept when the soul record is deleted, hence no `eraseWithSoul`.
 * With the account, the messages the user sent go by the cascade; those that
 * reached them stay with their senders, sealed (`eraseWithAccount`).
 */
@Injectable()
@PersonalDataSection()
export class MessagesPersonalData implements PersonalDataSource {
  readonly section = 'messages';
  constructor(private readonly messages: MessagesService) {}

  exportFor(userId: string, manager: EntityManager): Promise<unknown> {
    return this.messages.exportFor(userId, manager);
  }

  eraseWithAccount(userId: string, manager: EntityManager): Promise<number> {
    return this.messages.sealReceived(manager, userId);
  }
}
