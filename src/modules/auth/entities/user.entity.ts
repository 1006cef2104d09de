import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { UserTier } from '../../access/authenticated-user';

@Entity('users')
export class UserEntity {
  @PrimaryColumn('text') id: string;
  /** `sub` of the identity provider's token: the stable link to the outside identity. */
  @Column({ name: 'idp_subject', type: 'text', unique: true }) idpSubject: string;
  @Column('text') name: string;
  @Column('text', { nullable: true }) email: string | null;
  /** Lower-cased email of the latest login whose token verified it; unique. Contacts link by it, never by `email`. */
  @Column({ name: 'verified_email', type: 'text', nullable: true }) verifiedEmail: string | null;
  @Column('text') tier: UserTier;
  @Column({ name: 'soul_deleted_at', type: 'timestamptz', nullable: true }) soulDeletedAt: Date | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' }) updatedAt: Date;
}
