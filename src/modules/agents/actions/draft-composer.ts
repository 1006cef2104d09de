import { Injectable } from '@nestjs/common';
import { INITIAL_TRAITS, SoulTraits } from '../../soul/soul-traits';
import { Intent, readInstruction, realise, splitInstructions, Voice } from './draft-instructions';

export interface DraftRequest {
  /** The sender's soul traits; null when the soul record was deleted. */
  traits: SoulTraits | null;
  /** Signs the draft; null when the profile has no name. */
  senderName: string | null;
  to: string;
  /** Best known name of the recipient; derived from the address when absent. */
  recipientName?: string | null;
  subject: string;
  context: string;
}

export type FormalityBand = 'casual' | 'neutral' | 'formal';

/** Traits used when the user has deleted their soul: the middle of every scale. */
export const NEUTRAL_TRAITS: SoulTraits = { ...INITIAL_TRAITS };

export function formalityBand(formality: number): FormalityBand {
  if (formality < 0.35) return 'casual';
  if (formality > 0.7) return 'formal';
  return 'neutral';
}

/** Parts of an address that name a mailbox's role, not a person. */
const ROLE_MAILBOXES = new Set([
  'admin',
  'contact',
  'enquiries',
  'hello',
  'help',
  'info',
  'mail',
  'noreply',
  'no',
  'office',
  'sales',
  'support',
  'team',
]);

/** `jane.doe+work@example.com` → `Jane Doe`; null for role mailboxes (`info@`) and unreadable parts. */
export function recipientNameFromEmail(email: string): string | null {
  const local = email.split('@')[0].split('+')[0];
  const words = local
    .split(/[._-]+/)
    .map((w) => w.replace(/[^\p{L}']/gu, ''))
    .filter((w) => w.length > 0);
  if (words.length === 0 || words.every((w) => ROLE_MAILBOXES.has(w.toLowerCase()))) return null;
  return words.map((w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase()).join(' ');
}

export function firstName(name: string): string {
  return name.trim().split(/\s+/)[0];
}

/** Sentences of free text, each ending in punctuation; list markers and blank lines dropped. */
export function splitSentences(text: string): string[] {
  return text
    .split(/\n+/)
    .map((line) => line.replace(/^\s*(?:[-*•]|\d+[.)])\s+/, '').trim())
    .filter(Boolean)
    .flatMap((line) => line.split(/(?<=[.!?])\s+(?=["'(\p{Lu}\d])/u))
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => (/[.!?]["')]?$/.test(s) ? s : `${s}.`));
}

const REQUEST_START = /^(please|kindly|can you|could you|would you|will you|let me know|i need|we need|i'd like|i would like)\b/i;

export function isRequest(sentence: string): boolean {
  return /\?["')]?$/.test(sentence) || REQUEST_START.test(sentence) || /\bplease\b/i.test(sentence);
}

const capitalise = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
const withoutEndPunctuation = (s: string) => s.replace(/[.!?]+$/, '');

const FILLERS = /\b(?:just|really|actually|basically|perhaps|maybe)\s+/gi;

/** Direct style: one idea per sentence, fillers out, questions turned into plain asks. */
function tighten(sentence: string): string[] {
  const ask = /^(?:can|could|would|will) you (?:please )?(.+?)\?$/i.exec(sentence);
  const plain = ask ? `Please ${ask[1]}.` : sentence;
  return plain
    .replace(FILLERS, '')
    .split(/\s*;\s*|,\s+(?=(?:and|but|so)\s)/)
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => capitalise(/[.!?]$/.test(part) ? part : `${part}.`));
}

/** Diplomatic style: requests become questions or gain a courteous condition. */
function soften(sentence: string): string {
  const please = /^(?:please|kindly)\s+(.+?)[.!]?$/i.exec(sentence);
  if (please) return `Would you be able to ${please[1]}?`;
  const ask = /^(?:can|could|will) you (?:please )?(.+?)[?.!]?$/i.exec(sentence);
  if (ask) return `Would you be able to ${ask[1]}?`;
  if (/\?$/.test(sentence)) return sentence;
  return `${withoutEndPunctuation(sentence)}, if that works for you.`;
}

const WARMER: Record<string, string> = {
  good: 'wonderful',
  nice: 'lovely',
  great: 'fantastic',
  interesting: 'fascinating',
  happy: 'delighted',
  glad: 'thrilled',
  important: 'really important',
  thanks: 'huge thanks',
};

/** Expressive style: warmer adjectives, in one pass so replacements are not replaced again. */
function warm(sentence: string): string {
  return sentence.replace(new RegExp(`\\b(${Object.keys(WARMER).join('|')})\\b`, 'gi'), (word: string) => {
    const replacement = WARMER[word.toLowerCase()];
    return word.charAt(0) === word.charAt(0).toUpperCase() ? capitalise(replacement) : replacement;
  });
}

const GREETINGS: Record<FormalityBand, (name: string | null) => string> = {
  casual: (name) => (name ? `Hi ${firstName(name)},` : 'Hi there,'),
  neutral: (name) => (name ? `Hello ${name},` : 'Hello,'),
  formal: (name) => (name ? `Dear ${name},` : 'Dear Sir or Madam,'),
};

const SIGN_OFFS: Record<FormalityBand, string> = { casual: 'Cheers,', neutral: 'Best regards,', formal: 'Kind regards,' };

const CONSIDERATE_OPENINGS: Record<FormalityBand, string> = {
  casual: "Hope you're doing well!",
  neutral: "I hope you're doing well.",
  formal: 'I hope this message finds you well.',
};

const CONSIDERATE_CLOSINGS: Record<FormalityBand, string> = {
  casual: "Let me know if there's anything I can do to help.",
  neutral: "Please let me know if there's anything I can do to make this easier for you.",
  formal: 'Please do not hesitate to let me know if there is anything I can do to assist.',
};

const THANKS: Record<FormalityBand, string> = {
  casual: 'Thanks!',
  neutral: 'Thanks in advance.',
  formal: 'Thank you for your time.',
};

const LIGHT_LINES: Partial<Record<SoulTraits['humour'], string>> = {
  playful: 'P.S. I promise this email is shorter than my to-do list!',
  witty: "P.S. I'd have sent a carrier pigeon, but they never include read receipts.",
};

const INVITATION_LINES: Partial<Record<SoulTraits['humour'], string>> = {
  playful: 'P.S. I promise the cooking has improved since last time!',
  witty: "P.S. Dress code: whatever you're wearing right now.",
};

/** Is the intent something the reader is asked to do (so thanks in advance fit)? */
const ASKS: ReadonlySet<Intent['kind']> = new Set(['ask_to', 'ask_for', 'ask_whether', 'ask_about', 'remind', 'follow_up']);

/** A sentence the user wrote as part of the email, kept but worded in the sender's style. */
function styleVerbatim(style: SoulTraits['communication_style'], sentence: string): string {
  switch (style) {
    case 'direct':
      return tighten(sentence).join(' ');
    case 'expressive':
      return warm(sentence);
    case 'analytical':
      return sentence;
    case 'diplomatic':
    default:
      return isRequest(sentence) ? soften(sentence) : sentence;
  }
}

/**
 * Writes an email draft without any outside service, shaped by the sender's soul
 * (docs/decisions.md, "Soul traits" and "Consumer app (issue 23)").
 *
 * The context is read first as instructions to the agent ("invite Bob to dinner
 * on Friday", "ask her to send the report", "thank him for the flowers"): each
 * becomes what the email should do, worded to the recipient ("Would you like to
 * come over for dinner on Friday?"), never pasted back. Communication style picks
 * the move (direct asks plainly, diplomatic leaves room to say no, analytical
 * lays out facts and next steps, expressive shows feeling), formality the
 * register (contractions or none) and greeting and sign-off, empathy what is
 * said about the reader's time, humour an optional light line. Text that is not
 * an instruction is kept as the user wrote it, styled as before. Deterministic:
 * the same request always gives the same draft.
 */
@Injectable()
export class DraftComposer {
  compose(request: DraftRequest): string {
    const traits = request.traits ?? NEUTRAL_TRAITS;
    const band = formalityBand(traits.formality);
    const recipient = request.recipientName?.trim() || recipientNameFromEmail(request.to);
    const sender = request.senderName?.trim() || null;
    const voice: Voice = { style: traits.communication_style, band, warm: traits.empathy > 0.6 };

    const sentences = splitSentences(request.context);
    const intents = sentences.flatMap(splitInstructions).map((s) => readInstruction(s, recipient));
    const instructed = intents.some((intent) => intent.kind !== 'verbatim');

    const paragraphs: string[] = [GREETINGS[band](recipient)];
    if (traits.empathy > 0.6) paragraphs.push(CONSIDERATE_OPENINGS[band]);
    if (instructed) {
      paragraphs.push(...this.message(voice, intents));
      const asks = intents.some((intent) => ASKS.has(intent.kind));
      if (asks && traits.empathy > 0.6) paragraphs.push(CONSIDERATE_CLOSINGS[band]);
      else if (asks && traits.empathy >= 0.3) paragraphs.push(THANKS[band]);
    } else {
      paragraphs.push(...this.body(traits.communication_style, band, sentences));
      if (traits.empathy > 0.6) paragraphs.push(CONSIDERATE_CLOSINGS[band]);
      else if (traits.empathy >= 0.3) paragraphs.push(THANKS[band]);
    }
    const light = (intents.some((intent) => intent.kind === 'invite') ? INVITATION_LINES : LIGHT_LINES)[traits.humour];
    if (light) paragraphs.push(light);
    const signature = sender ? (band === 'casual' ? firstName(sender) : sender) : null;
    paragraphs.push(signature ? `${SIGN_OFFS[band]}\n${signature}` : SIGN_OFFS[band]);
    return paragraphs.join('\n\n');
  }

  /** The instructions as a message: direct keeps it to one short paragraph, analytical numbers several points. */
  private message(voice: Voice, intents: Intent[]): string[] {
    const parts = intents.map((intent) =>
      intent.kind === 'verbatim' ? [styleVerbatim(voice.style, intent.sentence)] : realise(intent, voice),
    );
    if (voice.style === 'direct') return [parts.flat().join(' ')];
    if (voice.style === 'analytical' && parts.length > 1) {
      const intro = voice.band === 'formal' ? 'Please find the points below:' : 'A few points:';
      return [`${intro}\n${parts.map((p, i) => `${i + 1}. ${p.join(' ')}`).join('\n')}`];
    }
    return parts.map((p) => p.join(' '));
  }

  private body(style: SoulTraits['communication_style'], band: FormalityBand, sentences: string[]): string[] {
    switch (style) {
      case 'direct': {
        // The ask first, then what supports it.
        const ordered = [...sentences.filter(isRequest), ...sentences.filter((s) => !isRequest(s))];
        return [ordered.flatMap(tighten).join(' ')];
      }
      case 'analytical': {
        const intro = band === 'formal' ? 'Please find the key points below:' : 'Here are the key points:';
        const points = sentences.map((s, i) => `${i + 1}. ${s}`).join('\n');
        const outro =
          band === 'casual'
            ? 'Let me know if any point needs more detail.'
            : 'Please let me know if any of these points need clarification.';
        return [`${intro}\n${points}`, outro];
      }
      case 'expressive': {
        const opener = band === 'formal' ? 'I am truly excited to share this with you.' : "I'm really excited to share this with you!";
        const closer = band === 'formal' ? 'I would be delighted to hear your thoughts.' : "I'd love to hear what you think!";
        return [opener, sentences.map(warm).join(' '), closer];
      }
      case 'diplomatic':
      default:
        return [sentences.map((s) => (isRequest(s) ? soften(s) : s)).join(' ')];
    }
  }
}
