import { Injectable } from '@nestjs/common';
import type { AgentAction } from '../agent-actions.repository';
import { DraftEmailParams, isAgentAction, SuggestReplyParams, SummarizeConversationParams } from './agent-action-params';
import { AgentActionRejected } from './agent-action.error';
import { ConversationSummarizer } from './conversation-summarizer';
import { EmailDrafter } from './email-drafter';
import { ReplySuggester } from './reply-suggester';

/** Runs one stored action with the params validated when it was requested. */
@Injectable()
export class AgentActionRunner {
  constructor(
    private readonly drafter: EmailDrafter,
    private readonly summarizer: ConversationSummarizer,
    private readonly suggester: ReplySuggester,
  ) {}

  async run(action: AgentAction): Promise<Record<string, unknown>> {
    if (!isAgentAction(action.action)) throw new AgentActionRejected(`Unknown action "${action.action}"`);
    switch (action.action) {
      case 'draft_email':
        return this.drafter.run(action.userId, action.params as unknown as DraftEmailParams);
      case 'summarize_conversation':
        return this.summarizer.run(action.userId, action.params as unknown as SummarizeConversationParams);
      case 'suggest_reply':
        return this.suggester.run(action.userId, action.params as unknown as SuggestReplyParams);
    }
  }
}
