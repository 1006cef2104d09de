import { Injectable } from '@nestjs/common';
import { SummarizeConversationParams } from './agent-action-params';
import { Conversation, ConversationReader } from './conversation-reader';

export interface ConversationSummary {
  summary: string;
  message_count: number;
  first_at: string | null;
  last_at: string | null;
  [key: string]: unknown;
}

const EXCERPT_LENGTH = 120;
const STOPWORDS = new Set(
  (
    'about above after again also been before being below between both could does doing down during each from further have having here ' +
    'hers herself himself into itself just more most myself once only other ours ourselves over same should some such than that their ' +
    'theirs them themselves then there these they this those through under until very were what when where which while whom will with ' +
    'would your yours yourself yourselves thanks thank hello please okay sure yeah today tomorrow going gonna want know think like really ' +
    'good great well time make sounds maybe'
  ).split(' '),
);

const day = (iso: string) => iso.slice(0, 10);

function excerpt(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= EXCERPT_LENGTH ? flat : `${flat.slice(0, EXCERPT_LENGTH - 1).trimEnd()}…`;
}

/** The most frequent words of length 4 or more that occur at least twice, most frequent first. */
function frequentTopics(texts: string[], count = 3): string[] {
  const frequency = new Map<string, number>();
  for (const text of texts) {
    for (const word of text.toLowerCase().match(/\p{L}[\p{L}'-]{3,}/gu) ?? []) {
      if (!STOPWORDS.has(word)) frequency.set(word, (frequency.get(word) ?? 0) + 1);
    }
  }
  return [...frequency.entries()]
    .filter(([, n]) => n >= 2)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, count)
    .map(([word]) => word);
}

/** A deterministic, extractive summary of a conversation (messages newest first). */
export function summarizeConversation(conversation: Conversation): ConversationSummary {
  const name = conversation.contact.name;
  const messages = [...conversation.messages].reverse();
  if (messages.length === 0) {
    return { summary: `No messages with ${name} yet.`, message_count: 0, first_at: null, last_at: null };
  }
  const first = messages[0];
  const last = messages[messages.length - 1];
  const sent = messages.filter((m) => m.direction === 'outbound').length;
  const received = messages.length - sent;
  const span =
    day(first.created_at) === day(last.created_at)
      ? `on ${day(first.created_at)}`
      : `between ${day(first.created_at)} and ${day(last.created_at)}`;

  const parts = [
    `${messages.length} message${messages.length === 1 ? '' : 's'} with ${name} ${span} (${sent} from you, ${received} from ${name}).`,
  ];
  const topics = frequentTopics(messages.map((m) => m.content));
  if (topics.length > 0) parts.push(`Frequent topics: ${topics.join(', ')}.`);
  parts.push(`Latest, from ${last.direction === 'outbound' ? 'you' : name} on ${day(last.created_at)}: "${excerpt(last.content)}"`);
  if (last.direction === 'inbound' && last.content.includes('?')) parts.push(`${name} asked a question that is waiting for your reply.`);
  return { summary: parts.join(' '), message_count: messages.length, first_at: first.created_at, last_at: last.created_at };
}

/** `summarize_conversation`. */
@Injectable()
export class ConversationSummarizer {
  constructor(private readonly conversations: ConversationReader) {}

  async run(userId: string, params: SummarizeConversationParams): Promise<ConversationSummary> {
    return summarizeConversation(await this.conversations.read(userId, params.contact_id, params.limit));
  }
}
