import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** A named set of the owner's contacts; a message to the group fans out to every member. */
@Entity('groups')
export class GroupEntity {
  @PrimaryColumn('text') id: string;
  @Column({ name: 'user_id', type: 'text' }) userId: string;
  @Column('text') name: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
