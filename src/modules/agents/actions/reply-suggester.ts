import { Injectable } from '@nestjs/common';
import { SoulService } from '../../soul/soul.service';
import { SoulTraits } from '../../soul/soul-traits';
import { SuggestReplyParams } from './agent-action-params';
import { Conversation, ConversationReader } from './conversation-reader';
import { firstName, NEUTRAL_TRAITS } from './draft-composer';

export interface ReplySuggestions {
  suggestions: string[];
  /** What the suggestions answer: the latest inbound message, or an opener when there is none. */
  in_reply_to: string | null;
  [key: string]: unknown;
}

type Kind = 'question' | 'thanks' | 'apology' | 'invitation' | 'other' | 'opener';
/** One reply in a casual and a formal register. */
type Reply = { casual: string; formal: string };

/** Three replies per kind of message: yes / engage, hold on / ask more, gentle alternative. */
const REPLIES: Record<Kind, Reply[]> = {
  question: [
    {
      casual: "Good question! Let me check and I'll get back to you today.",
      formal: 'I will look into it and reply today.',
    },
    { casual: 'Yes, that works for me.', formal: 'Yes, that works for me.' },
    {
      casual: 'Can you tell me a bit more so I get it right?',
      formal: 'Could you share a little more detail so that I can answer precisely?',
    },
  ],
  thanks: [
    { casual: 'Anytime, happy to help!', formal: 'You are very welcome; I was glad to help.' },
    { casual: 'No problem at all. Shout if you need anything else.', formal: 'My pleasure. Please let me know if you need anything else.' },
    { casual: 'Glad it worked out!', formal: 'I am pleased it worked out.' },
  ],
  apology: [
    { casual: 'No worries at all!', formal: 'No apology needed; these things happen.' },
    {
      casual: "All good, thanks for letting me know. Let's pick it up when you're ready.",
      formal: 'Thank you for letting me know. We can continue whenever suits you.',
    },
    { casual: "Don't worry about it. Is there anything I can do?", formal: 'Please do not worry. Is there anything I can do to help?' },
  ],
  invitation: [
    { casual: "I'd love to! When works for you?", formal: 'I would be glad to. What time would suit you?' },
    { casual: 'Sounds great. Count me in.', formal: 'That sounds excellent; please count me in.' },
    {
      casual: "Can't make it this time, but let's find another day?",
      formal: 'I am unable to join this time; could we find another date?',
    },
  ],
  other: [
    { casual: 'Thanks for the update!', formal: 'Thank you for the update.' },
    { casual: 'Got it. I’ll take a look and get back to you.', formal: 'Noted. I will review it and come back to you shortly.' },
    { casual: 'Interesting! Tell me more?', formal: 'That is interesting; could you tell me more?' },
  ],
  opener: [
    { casual: 'Hey {first}! How have you been?', formal: 'Hello {name}, I hope you are well.' },
    {
      casual: "Hi {first}, it's been a while. Fancy catching up soon?",
      formal: 'Hello {name}, would you have time for a conversation in the coming days?',
    },
    {
      casual: 'Hey {first}, just thinking of you. How are things?',
      formal: 'Dear {name}, I wanted to check in and see how things are going.',
    },
  ],
};

const WARM_OPENINGS: Record<Kind, { casual: string; formal: string } | null> = {
  question: { casual: 'Thanks for asking!', formal: 'I appreciate you asking.' },
  thanks: null,
  apology: { casual: 'Really, it’s fine.', formal: 'I completely understand.' },
  invitation: { casual: 'That’s so kind of you!', formal: 'That is very kind of you.' },
  other: { casual: 'Thanks for sharing this with me!', formal: 'Thank you for sharing this with me.' },
  opener: null,
};

const LIGHT_TOUCH: Partial<Record<SoulTraits['humour'], string>> = {
  playful: ' 😄',
  witty: ' (Reply speed: suspiciously efficient.)',
};

export function classifyMessage(text: string | null): Kind {
  if (text === null) return 'opener';
  if (/\b(sorry|apologi[sz]e|my bad)\b/i.test(text)) return 'apology';
  if (/\b(join|coffee|lunch|dinner|drinks|party|come over|catch up|meet up|hang out)\b/i.test(text)) return 'invitation';
  if (text.includes('?')) return 'question';
  if (/\b(thanks|thank you|thx|ty|appreciate)\b/i.test(text)) return 'thanks';
  return 'other';
}

const firstSentence = (s: string) => /^.*?[.!?](?=\s|$)/.exec(s)?.[0] ?? s;

/**
 * 2–3 short replies to the latest inbound message (or openers), in the user's
 * voice: formality picks the register, empathy adds warmth, communication
 * style the shape, humour a light touch. Deterministic.
 */
export function suggestReplies(input: { traits: SoulTraits | null; contactName: string; latestInbound: string | null }): string[] {
  const traits = input.traits ?? NEUTRAL_TRAITS;
  const kind = classifyMessage(input.latestInbound);
  const register = traits.formality < 0.5 ? 'casual' : 'formal';
  let replies = REPLIES[kind].map((r) =>
    r[register].replaceAll('{first}', firstName(input.contactName)).replaceAll('{name}', input.contactName),
  );

  const warmth = WARM_OPENINGS[kind];
  if (traits.empathy > 0.6 && warmth) replies[0] = `${warmth[register]} ${replies[0]}`;

  switch (traits.communication_style) {
    case 'direct':
      replies = replies.slice(0, 2).map(firstSentence);
      break;
    case 'diplomatic':
      // Softened: the last reply becomes a tentative question.
      replies[replies.length - 1] =
        `${replies[replies.length - 1].replace(/[.!?]$/, '')}${register === 'casual' ? ', if that’s okay?' : ', if that suits you?'}`;
      break;
    case 'analytical':
      replies[1] = `${replies[1]} ${register === 'casual' ? 'What are the key details and the timeline?' : 'Could you confirm the key details and the timeline?'}`;
      break;
    case 'expressive':
      replies = replies.map((r) => r.replace(/\.(?=\s|$)/g, '!'));
      break;
  }

  const light = LIGHT_TOUCH[traits.humour];
  if (light) replies[replies.length - 1] += light;
  return replies;
}

/** `suggest_reply`. */
@Injectable()
export class ReplySuggester {
  constructor(
    private readonly conversations: ConversationReader,
    private readonly souls: SoulService,
  ) {}

  async run(userId: string, params: SuggestReplyParams): Promise<ReplySuggestions> {
    const [conversation, soul] = await Promise.all([this.conversations.read(userId, params.contact_id, 20), this.souls.findByUser(userId)]);
    const latest = latestInbound(conversation);
    return {
      suggestions: suggestReplies({
        traits: soul?.traits ?? null,
        contactName: conversation.contact.name,
        latestInbound: latest?.content ?? null,
      }),
      in_reply_to: latest?.id ?? null,
    };
  }
}

function latestInbound(conversation: Conversation) {
  return conversation.messages.find((m) => m.direction === 'inbound') ?? null;
}
