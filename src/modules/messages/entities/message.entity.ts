import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export const MESSAGE_TYPES = ['text', 'markdown'] as const;
export type MessageType = (typeof MESSAGE_TYPES)[number];
export type RecipientKind = 'contact' | 'group';

/** A message as sent: addressed to one of the sender's contacts or groups. */
@Entity('messages')
export class MessageEntity {
  @PrimaryColumn('text') id: string;
  @Column({ name: 'sender_id', type: 'text' }) senderId: string;
  @Column({ name: 'recipient_kind', type: 'text' }) recipientKind: RecipientKind;
  /** The sender's `con_` or `grp_` id. */
  @Column({ name: 'recipient_id', type: 'text' }) recipientId: string;
  @Column('text') type: MessageType;
  @Column('text') content: string;
  @Column('text') status: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
}
