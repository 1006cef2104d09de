import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** Transactional outbox row: written with the change that caused it, dispatched by the worker. */
@Entity('events')
export class DomainEventEntity {
  @PrimaryColumn('text') id: string;
  @Column('text') type: string;
  @Column('jsonb') payload: Record<string, unknown>;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column({ name: 'dispatched_at', type: 'timestamptz', nullable: true }) dispatchedAt: Date | null;
  @Column('integer', { default: 0 }) attempts: number;
  @Column({ name: 'last_error', type: 'text', nullable: true }) lastError: string | null;
  @Column({ name: 'available_at', type: 'timestamptz', default: () => 'now()' }) availableAt: Date;
}
