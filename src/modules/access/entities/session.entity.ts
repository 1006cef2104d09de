import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** One login. Access tokens name it in `sid`; revoking it refuses every token it issued. */
@Entity('sessions')
export class SessionEntity {
  @PrimaryColumn('text') id: string;
  @Column({ name: 'user_id', type: 'text' }) userId: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column({ name: 'expires_at', type: 'timestamptz' }) expiresAt: Date;
  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true }) revokedAt: Date | null;
  /** Within a minute: written by the session check at most once a minute (SessionsRepository.findLiveMany). */
  @Column({ name: 'last_used_at', type: 'timestamptz', default: () => 'now()' }) lastUsedAt: Date;
  /** The client that signed in: its `User-Agent` (cut to 512 characters) and address, for the user's session list. */
  @Column({ name: 'user_agent', type: 'text', nullable: true }) userAgent: string | null;
  @Column({ name: 'ip_address', type: 'text', nullable: true }) ipAddress: string | null;
}
