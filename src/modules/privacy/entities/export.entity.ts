import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export const EXPORT_STATUSES = ['pending', 'ready', 'failed'] as const;
export type ExportStatus = (typeof EXPORT_STATUSES)[number];

/** One requested copy of a user's personal data (`exports` table, created by the UserApi migration). */
@Entity('exports')
export class ExportEntity {
  @PrimaryColumn('text') id: string;
  @Column({ name: 'user_id', type: 'text' }) userId: string;
  @Column('text') format: string;
  @Column('text') status: ExportStatus;
  /** The rendered document; dropped by the retention purge once the export has expired. */
  @Column('text', { nullable: true }) content: string | null;
  @Column({ name: 'content_type', type: 'text', nullable: true }) contentType: string | null;
  /** Why the build failed, for operators; users get a generic message. */
  @Column('text', { nullable: true }) error: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true }) completedAt: Date | null;
  @Column({ name: 'expires_at', type: 'timestamptz' }) expiresAt: Date;
}
