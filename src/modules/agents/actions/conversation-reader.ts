import { Injectable } from '@nestjs/common';
import { ApiError } from '../../../common/errors/api-error';
import { ContactsService } from '../../contacts/contacts.service';
import { MessageItemDto } from '../../messages/dto/message.dto';
import { MessagesService } from '../../messages/messages.service';
import { DEFAULT_CONVERSATION_LIMIT } from './agent-action-params';
import { AgentActionRejected } from './agent-action.error';

export interface ConversationMessage {
  id: string;
  direction: 'outbound' | 'inbound';
  content: string;
  /** ISO 8601. */
  created_at: string;
}

export interface Conversation {
  contact: { id: string; name: string };
  /** Newest first. */
  messages: ConversationMessage[];
}

/** The conversation with one of the user's contacts, through the contacts and messages areas' services. */
@Injectable()
export class ConversationReader {
  constructor(
    private readonly contacts: ContactsService,
    private readonly messages: MessagesService,
  ) {}

  /** NOT_FOUND unless the contact is one of the user's (checked when the action is requested). */
  async assertContact(userId: string, contactId: string): Promise<void> {
    await this.contacts.get(userId, contactId);
  }

  async read(userId: string, contactId: string, limit: number | undefined): Promise<Conversation> {
    try {
      const contact = await this.contacts.get(userId, contactId);
      const items = await this.messages.conversation(userId, contactId, limit ?? DEFAULT_CONVERSATION_LIMIT);
      return toConversation(contact, items);
    } catch (error) {
      // Deleted between the request and the run: retrying will not bring it back.
      if (error instanceof ApiError && error.code === 'NOT_FOUND') throw new AgentActionRejected(`Contact ${contactId} no longer exists`);
      throw error;
    }
  }
}

function toConversation(contact: { id: string; name: string }, items: MessageItemDto[]): Conversation {
  return {
    contact: { id: contact.id, name: contact.name },
    messages: items.map((m) => ({
      id: m.id,
      direction: m.direction,
      content: m.content,
      created_at: new Date(m.created_at).toISOString(),
    })),
  };
}
