import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { PersonalDataSection, PersonalDataSource } from '../../common/personal-data';
import { AgentActionsRepository } from './agent-actions.repository';

/**
 * The user's agent actions in exports. Their params and results were shaped by
 * the soul record (drafts in the user's voice, summaries of their
 * conversations), so they are erased together with it.
 */
@Injectable()
@PersonalDataSection()
export class AgentActionsPersonalData implements PersonalDataSource {
  readonly section = 'agent_actions';
  constructor(private readonly actions: AgentActionsRepository) {}

  async exportFor(userId: string, manager: EntityManager): Promise<unknown> {
    const rows = await this.actions.allForUser(userId, manager);
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

  eraseWithSoul(userId: string, manager: EntityManager): Promise<number> {
    return this.actions.deleteForUser(userId, manager);
  }
}
