import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { PersonalDataSection, PersonalDataSource } from '../../common/personal-data';
import { ContactsService } from './contacts.service';
import { GroupsService } from './groups.service';

/** `contacts` section of the export. Contacts are kept when the soul record is deleted, hence no `eraseWithSoul`. */
@Injectable()
@PersonalDataSection()
export class ContactsPersonalData implements PersonalDataSource {
  readonly section = 'contacts';
  constructor(private readonly contacts: ContactsService) {}

  exportFor(userId: string, manager: EntityManager): Promise<unknown> {
    return this.contacts.exportFor(userId, manager);
  }
}

/** `groups` section of the export, with member ids. Kept when the soul record is deleted. */
@Injectable()
@PersonalDataSection()
export class GroupsPersonalData implements PersonalDataSource {
  readonly section = 'groups';
  constructor(private readonly groups: GroupsService) {}

  exportFor(userId: string, manager: EntityManager): Promise<unknown> {
    return this.groups.exportFor(userId, manager);
  }
}
