import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';
import { AgentActionEntity, AgentActionStatus } from './entities/agent-action.entity';

/** One agent action as stored: what was asked, with the params validated at request time, and how it ended. */
export interface AgentAction {
  id: string;
  userId: string;
  action: string;
  params: Record<string, unknown>;
  status: AgentActionStatus;
  result: Record<string, unknown> | null;
  error: string | null;
  createdAt: Date;
  completedAt: Date | null;
}

/** The `agent_actions` table. */
@Injectable()
export class AgentActionsRepository extends SqlRepository {
  constructor(
    @InjectDataSource() dataSource: DataSource,
    @InjectRepository(AgentActionEntity) private readonly actions: Repository<AgentActionEntity>,
  ) {
    super(dataSource);
  }

  /** A new action, `queued`, inside the transaction that records its job. */
  async insertQueued(tx: Tx, action: { id: string; userId: string; action: string; params: Record<string, unknown> }): Promise<void> {
    await this.execute(
      `INSERT INTO agent_actions (id, user_id, action, params, status) VALUES ($1, $2, $3, $4::jsonb, 'queued')`,
      [action.id, action.userId, action.action, JSON.stringify(action.params)],
      tx,
    );
  }

  findForUser(userId: string, id: string): Promise<AgentAction | null> {
    return this.actions.findOne({ where: { id, userId } });
  }

  findById(id: string): Promise<AgentAction | null> {
    return this.actions.findOne({ where: { id } });
  }

  /**
   * Moves an unfinished action to `status` (with its result or error when it
   * finishes); false when it is finished or gone, so a duplicate or stalled
   * job can never overwrite a result.
   */
  async transition(
    id: string,
    status: AgentActionStatus,
    outcome: { result?: Record<string, unknown>; error?: string } = {},
  ): Promise<boolean> {
    const finished = status === 'completed' || status === 'failed';
    const { count } = await this.changed(
      `UPDATE agent_actions
          SET status = $2, result = $3::jsonb, error = $4, completed_at = CASE WHEN $5 THEN now() END
        WHERE id = $1 AND status IN ('queued', 'running')`,
      [id, status, outcome.result === undefined ? null : JSON.stringify(outcome.result), outcome.error ?? null, finished],
    );
    return count > 0;
  }

  /** Every action of the user, oldest first (the personal data export). */
  allForUser(userId: string, tx: Tx): Promise<AgentAction[]> {
    return tx.getRepository(AgentActionEntity).find({ where: { userId }, order: { createdAt: 'ASC', id: 'ASC' } });
  }

  /** How many actions were deleted. */
  async deleteForUser(userId: string, tx: Tx): Promise<number> {
    const result = await tx.getRepository(AgentActionEntity).delete({ userId });
    return result.affected ?? 0;
  }
}
