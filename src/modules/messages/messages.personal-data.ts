import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { PersonalDataSection, PersonalDataSource } from '../../common/personal-data';
import { MessagesService } from './messages.service';

/**
 * `messages` section of the export: `sent` (with recipients) and `received`
 * (from linked users). Messages are kept when the soul record is deleted, hence no `eraseWithSoul`.
 */
@Injectable()
@PersonalDataSection()
export class MessagesPersonalData implements PersonalDataSource {
  readonly section = 'messages';
  constructor(private readonly messages: MessagesService) {}

  exportFor(userId: string, manager: EntityManager): Promise<unknown> {
    return this.messages.exportFor(userId, manager);
  }
}
