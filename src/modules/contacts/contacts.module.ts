import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessModule } from '../access/access.module';
import { ContactsController } from './contacts.controller';
import { ContactsRepository } from './contacts.repository';
import { ContactsPersonalData, GroupsPersonalData } from './contacts.personal-data';
import { ContactsService } from './contacts.service';
import { ContactEntity } from './entities/contact.entity';
import { GroupMemberEntity } from './entities/group-member.entity';
import { GroupEntity } from './entities/group.entity';
import { GroupsController } from './groups.controller';
import { GroupsRepository } from './groups.repository';
import { GroupsService } from './groups.service';

/** Contacts and groups of the user API. */
@Module({
  imports: [TypeOrmModule.forFeature([ContactEntity, GroupEntity, GroupMemberEntity]), AccessModule],
  controllers: [ContactsController, GroupsController],
  providers: [ContactsService, GroupsService, ContactsRepository, GroupsRepository, ContactsPersonalData, GroupsPersonalData],
  exports: [ContactsService, GroupsService, ContactsRepository, GroupsRepository],
})
export class ContactsModule {}
