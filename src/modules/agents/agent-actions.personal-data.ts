import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { PersonalDataSection, PersonalDataSource } from '../privacy/personal-data';
import { AgentActionEntity } from './entities/agent-action.entity';

/**
 * The user's agent actions in exports. Their params and results were shaped by
 * the soul record (drafts in the user's voice, summaries of their
 * conversations), so they are erased together with it.
 */
@Injectable()
@PersonalDataSection()
export class AgentActionsPersonalData implements PersonalDataSource {
  readonly section = 'agent_actions';

  async exportFor(userId: string, manager: EntityManager): Promise<unknown> {
    const rows = await manager.getRepository(AgentActionEntity).find({ where: { userId }, order: { createdAt: 'ASC', id: 'ASC' } });
    return rows.map((row) => ({
      id: row.id,
      action: row.action,
      params: row.params,
      status: row.status,
      result: row.result,
      error: row.error,
      created_at: row.createdAt.toISOString(),
      completed_at: row.completedAt?.toISOString() ?? null,
    }));
  }

  async eraseWithSoul(userId: string, manager: EntityManager): Promise<number> {
    const result = await manager.getRepository(AgentActionEntity).delete({ userId });
    return result.affected ?? 0;
  }
}
