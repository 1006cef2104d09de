import { Column, Entity, PrimaryColumn } from 'typeorm';

/** One delivery of a message: one row per contact (a group fans out to every member). */
@Entity('message_recipients')
export class MessageRecipientEntity {
  @PrimaryColumn({ name: 'message_id', type: 'text' }) messageId: string;
  @PrimaryColumn({ name: 'contact_id', type: 'text' }) contactId: string;
  /** The service user behind the contact, when linked: whose inbox the message reaches. */
  @Column({ name: 'recipient_user_id', type: 'text', nullable: true }) recipientUserId: string | null;
  @Column({ type: 'text', default: 'sent' }) status: string;
  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true }) deliveredAt: Date | null;
  @Column({ name: 'read_at', type: 'timestamptz', nullable: true }) readAt: Date | null;
}
