import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** One login. Access tokens name it in `sid`; revoking it refuses every token it issued. */
@Entity('sessions')
export class SessionEntity {
  @PrimaryColumn('text') id: string;
  @Column({ name: 'user_id', type: 'text' }) userId: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column({ name: 'expires_at', type: 'timestamptz' }) expiresAt: Date;
  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true }) revokedAt: Date | null;
}
