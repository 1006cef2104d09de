import { Injectable } from '@nestjs/common';
import { UsersService } from '../../auth/users.service';
import { SoulService } from '../../soul/soul.service';
import { DraftEmailParams } from './agent-action-params';
import { AgentActionRejected } from './agent-action.error';
import { DraftComposer, NEUTRAL_TRAITS, recipientNameFromEmail } from './draft-composer';
import { draftPrompt } from './draft-prompt';
import { AgentLanguageModel } from './language-model';

export interface DraftEmailResult {
  draft: string;
  subject: string;
  to: string;
  /** `llm` when the configured language model wrote it, `composer` for the built-in composer. */
  source: 'llm' | 'composer';
  [key: string]: unknown;
}

/** `draft_email`: the language model when one is configured and answers, the built-in composer otherwise. */
@Injectable()
export class EmailDrafter {
  constructor(
    private readonly souls: SoulService,
    private readonly users: UsersService,
    private readonly composer: DraftComposer,
    private readonly model: AgentLanguageModel,
  ) {}

  async run(userId: string, params: DraftEmailParams): Promise<DraftEmailResult> {
    const [soul, profile] = await Promise.all([this.souls.findByUser(userId), this.users.profile(userId)]);
    if (!profile) throw new AgentActionRejected('The user no longer exists');
    const senderName = profile.name.trim() || null;
    const recipientName = recipientNameFromEmail(params.to);
    const traits = soul?.traits ?? null;

    if (this.model.configured) {
      const draft = await this.model.complete(
        draftPrompt({
          traits: traits ?? NEUTRAL_TRAITS,
          values: soul?.values ?? [],
          senderName,
          to: params.to,
          recipientName,
          subject: params.subject,
          context: params.context,
        }),
      );
      if (draft !== null) return { draft, subject: params.subject, to: params.to, source: 'llm' };
    }
    const draft = this.composer.compose({
      traits,
      senderName,
      to: params.to,
      recipientName,
      subject: params.subject,
      context: params.context,
    });
    return { draft, subject: params.subject, to: params.to, source: 'composer' };
  }
}
