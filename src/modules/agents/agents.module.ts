import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { ContactsModule } from '../contacts/contacts.module';
import { MessagesModule } from '../messages/messages.module';
import { SoulModule } from '../soul/soul.module';
import { AgentActionRunner } from './actions/agent-action-runner';
import { ConversationReader } from './actions/conversation-reader';
import { ConversationSummarizer } from './actions/conversation-summarizer';
import { DraftComposer } from './actions/draft-composer';
import { EmailDrafter } from './actions/email-drafter';
import { AgentLanguageModel } from './actions/language-model';
import { ReplySuggester } from './actions/reply-suggester';
import { AgentActionsPersonalData } from './agent-actions.personal-data';
import { AgentActionsRepository } from './agent-actions.repository';
import { AgentsController } from './agents.controller';
import { AgentsQueue } from './agents.queue';
import { AgentsService } from './agents.service';
import { AgentActionEntity } from './entities/agent-action.entity';

/**
 * Agent actions on the user's behalf. The api role records and enqueues them;
 * the worker role runs them (AgentsProcessor, registered in agents.worker.ts,
 * uses the runner and the AgentActionsRepository exported here).
 */
@Module({
  imports: [TypeOrmModule.forFeature([AgentActionEntity]), AccessModule, AuthModule, SoulModule, ContactsModule, MessagesModule],
  controllers: [AgentsController],
  providers: [
    AgentsService,
    AgentActionsRepository,
    AgentsQueue,
    AgentActionRunner,
    EmailDrafter,
    DraftComposer,
    AgentLanguageModel,
    ConversationReader,
    ConversationSummarizer,
    ReplySuggester,
    AgentActionsPersonalData,
  ],
  exports: [AgentsService, AgentActionsRepository, AgentActionRunner],
})
export class AgentsModule {}
