import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { ContactsController } from './contacts.controller';
import { ContactsPersonalData, GroupsPersonalData } from './contacts.personal-data';
import { ContactsService } from './contacts.service';
import { ContactEntity } from './entities/contact.entity';
import { GroupMemberEntity } from './entities/group-member.entity';
import { GroupEntity } from './entities/group.entity';
import { GroupsController } from './groups.controller';
import { GroupsService } from './groups.service';

/** Contacts and groups of the user API. */
@Module({
  imports: [TypeOrmModule.forFeature([ContactEntity, GroupEntity, GroupMemberEntity]), AuthModule],
  controllers: [ContactsController, GroupsController],
  providers: [ContactsService, GroupsService, ContactsPersonalData, GroupsPersonalData],
  exports: [ContactsService, GroupsService],
})
export class ContactsModule {}
