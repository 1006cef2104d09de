import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** One entry of a user's address book. Which service user it reaches is derived from its email (see contact-links.ts). */
@Entity('contacts')
export class ContactEntity {
  @PrimaryColumn('text') id: string;
  @Column({ name: 'user_id', type: 'text' }) userId: string;
  @Column('text') name: string;
  @Column('text', { nullable: true }) email: string | null;
  /** Interaction weight as of `weight_at`; see relationship-score.ts. */
  @Column({ name: 'interaction_weight', type: 'double precision', default: 0 }) interactionWeight: number;
  @Column({ name: 'weight_at', type: 'timestamptz', nullable: true }) weightAt: Date | null;
  @Column({ name: 'last_interaction', type: 'timestamptz', nullable: true }) lastInteraction: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
