import { CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

@Entity('group_members')
export class GroupMemberEntity {
  @PrimaryColumn({ name: 'group_id', type: 'text' }) groupId: string;
  @PrimaryColumn({ name: 'contact_id', type: 'text' }) contactId: string;
  @CreateDateColumn({ name: 'added_at', type: 'timestamptz' }) addedAt: Date;
}
