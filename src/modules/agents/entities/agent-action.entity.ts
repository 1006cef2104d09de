import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

export const AGENT_ACTION_STATUSES = ['queued', 'running', 'completed', 'failed'] as const;
export type AgentActionStatus = (typeof AGENT_ACTION_STATUSES)[number];

/** One agent action requested by a user; the worker fills `result` or `error`. */
@Entity('agent_actions')
export class AgentActionEntity {
  @PrimaryColumn('text') id: string;
  @Column({ name: 'user_id', type: 'text' }) userId: string;
  @Column('text') action: string;
  @Column('jsonb') params: Record<string, unknown>;
  @Column('text') status: AgentActionStatus;
  @Column('jsonb', { nullable: true }) result: Record<string, unknown> | null;
  @Column('text', { nullable: true }) error: string | null;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true }) completedAt: Date | null;
}
