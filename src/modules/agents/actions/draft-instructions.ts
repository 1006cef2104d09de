import { SoulTraits } from '../../soul/soul-traits';

/**
 * What the user asked the agent to write ("invite Bob to dinner on Friday"),
 * read as what the email should do. The composer words each intent in the
 * sender's voice instead of pasting the instruction into the email.
 */
export type Intent =
  | { kind: 'invite'; occasion: string }
  | { kind: 'ask_to'; action: string }
  | { kind: 'ask_whether'; clause: string }
  | { kind: 'ask_about'; topic: string }
  | { kind: 'ask_for'; thing: string }
  | { kind: 'tell'; statement: string }
  | { kind: 'thank'; reason: string }
  | { kind: 'remind'; what: string }
  | { kind: 'apologise'; reason: string }
  | { kind: 'congratulate'; reason: string }
  | { kind: 'follow_up'; topic: string }
  /** Not an instruction: a sentence of the email as the user wrote it. */
  | { kind: 'verbatim'; sentence: string };

export interface Voice {
  style: SoulTraits['communication_style'];
  band: 'casual' | 'neutral' | 'formal';
  /** Above 0.6: attentive to the reader's time and feelings. */
  warm: boolean;
}

const VERBS = 'invite|ask|tell|thank|remind|let|apologi[sz]e|congratulate|follow up|mention|say|write to|email';

/** `invite Bob to dinner, and ask him to bring wine` → two instructions. */
export function splitInstructions(sentence: string): string[] {
  return sentence
    .split(new RegExp(`(?:,\\s*|;\\s*|\\s+)(?:and|then|also)\\s+(?=(?:please\\s+)?(?:${VERBS})\\b)`, 'i'))
    .map((part) => part.trim())
    .filter(Boolean);
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Turns third-person mentions of the recipient into second person, as the
 * email speaks to them: `his wife` → `your wife`, `if she is free` → `if you are free`.
 */
export function toSecondPerson(text: string, recipient: string | null): string {
  let out = text;
  if (recipient) {
    const names = [recipient, recipient.split(/\s+/)[0]].map(escapeRegExp).join('|');
    out = out.replace(new RegExp(`\\b(?:${names})'s\\b`, 'g'), 'your').replace(new RegExp(`\\b(?:${names})\\b`, 'g'), 'you');
  }
  out = out
    .replace(/\b(?:he|she|they) (?:is|are)\b/gi, 'you are')
    .replace(/\b(?:he|she|they) (?:was|were)\b/gi, 'you were')
    .replace(/\b(?:he|she|they) (?:has|have)\b/gi, 'you have')
    .replace(/\b(?:he|she|they) (?:does|do)\b/gi, 'you do')
    .replace(/\b(?:he's|she's|they're)\b/gi, "you're")
    .replace(/\b(?:he'll|she'll|they'll)\b/gi, "you'll")
    .replace(/\b(?:he|she|they) (\w+?)s\b(?!')/gi, (_m, verb: string) => `you ${verb}`)
    .replace(/\b(?:he|she|they)\b/gi, 'you')
    .replace(/\b(?:his|their)\b/gi, 'your')
    .replace(/\bher(?=\s+(?!(?:to|and|if|that|for|on|at|in|about|by|the|a|an|some|my|your)\b)[\p{L}\d])/giu, 'your')
    .replace(/\b(?:him|her|them)\b/gi, 'you')
    .replace(/\b(?:himself|herself|themselves)\b/gi, 'yourself');
  return out;
}

/** Who the instruction names as its object: the recipient by name, or a pronoun. */
function addresseePattern(recipient: string | null): string {
  const names = recipient ? [recipient, recipient.split(/\s+/)[0]].map(escapeRegExp) : [];
  return `(?:${[...names, 'him', 'her', 'them', 'everyone', 'everybody', '(?:the|my|our) (?:team|group|class|family|neighbours|neighbors|committee|board|club)', "[A-Z][\\p{L}'-]+(?:\\s+[A-Z][\\p{L}'-]+)?"].join('|')})`;
}

const trimEnd = (s: string) => s.replace(/[\s.!?]+$/, '').trim();

/** Reads one instruction; anything that is not one stays as written. */
export function readInstruction(sentence: string, recipient: string | null): Intent {
  const stripped = sentence.replace(/^(?:please|kindly|can you|could you)\s+/i, '');
  // Only the leading verb is case-folded: a capitalised word after it is read as the addressee's name.
  const text = stripped.charAt(0).toLowerCase() + stripped.slice(1);
  const who = addresseePattern(recipient);
  const you = (s: string) => toSecondPerson(trimEnd(s), recipient);
  const match = (pattern: string) => new RegExp(`^${pattern}$`, 'u').exec(trimEnd(text));
  let m: RegExpExecArray | null;
  if (!new RegExp(`^(?:${VERBS})\\b`).test(text)) {
    return { kind: 'verbatim', sentence };
  }
  if ((m = match(`invite(?:\\s+${who})?\\s+(?:over\\s+)?(?:to|for)\\s+(.+)`))) return { kind: 'invite', occasion: you(m[1]) };
  if ((m = match(`invite(?:\\s+${who})?\\s+over(?:\\s+(.+))?`))) return { kind: 'invite', occasion: you(m[1] ?? '') };
  if ((m = match(`ask(?:\\s+${who})?\\s+(?:if|whether)\\s+(.+)`))) return { kind: 'ask_whether', clause: you(m[1]) };
  if ((m = match(`ask(?:\\s+${who})?\\s+(?:for|to send(?: me)?)\\s+(.+)`))) return { kind: 'ask_for', thing: you(m[1]) };
  if ((m = match(`ask(?:\\s+${who})?\\s+(?:about|how)\\s+(.+)`))) return { kind: 'ask_about', topic: you(m[1]) };
  if ((m = match(`ask(?:\\s+${who})?\\s+to\\s+(.+)`))) return { kind: 'ask_to', action: you(m[1]) };
  if ((m = match(`(?:tell|inform|mention to)(?:\\s+${who})?\\s+(?:that\\s+)?(.+)`))) return { kind: 'tell', statement: you(m[1]) };
  if ((m = match(`let\\s+${who}\\s+know\\s+(?:that\\s+)?(.+)`))) return { kind: 'tell', statement: you(m[1]) };
  if ((m = match(`(?:mention|say)(?:\\s+to\\s+${who})?\\s+(?:that\\s+)?(.+)`))) return { kind: 'tell', statement: you(m[1]) };
  if ((m = match(`thank(?:\\s+${who})?\\s+(?:for\\s+)?(.+)`))) return { kind: 'thank', reason: you(m[1]) };
  if ((m = match(`remind(?:\\s+${who})?\\s+((?:to|about|that|of)\\s+.+)`)))
    return { kind: 'remind', what: you(m[1]).replace(/^of\b/i, 'about') };
  if ((m = match(`apologi[sz]e(?:\\s+to\\s+${who})?\\s+(?:for\\s+)?(.+)`))) return { kind: 'apologise', reason: you(m[1]) };
  if ((m = match(`congratulate(?:\\s+${who})?\\s+(?:on|for)\\s+(.+)`))) return { kind: 'congratulate', reason: you(m[1]) };
  if ((m = match(`follow up(?:\\s+with\\s+${who})?\\s+(?:on|about)\\s+(.+)`))) return { kind: 'follow_up', topic: you(m[1]) };
  return { kind: 'verbatim', sentence };
}

const MEALS = /^(?:dinner|lunch|breakfast|brunch|drinks|coffee|tea|a drink|a coffee|a meal|supper|a barbecue|a bbq)\b/i;

/** `you are free on Friday` → `are you free on Friday`; other clauses keep their order. */
function asQuestion(clause: string): string | null {
  const m = /^you (are|were|can|could|will|would|should|have to|might)\b\s*(.*)$/i.exec(clause);
  if (m) return `${m[1].toLowerCase()} you ${m[2]}`.trim();
  const verb = /^you (\w+)\b\s*(.*)$/i.exec(clause);
  if (verb) return `do you ${verb[1]} ${verb[2]}`.trim();
  return null;
}

const cap = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

/** `I'd` or `I would`: a formal voice writes words out. */
function register(voice: Voice, informal: string, formal: string): string {
  return voice.band === 'formal' ? formal : informal;
}

/**
 * The sentences of one intent in the sender's voice: style decides the move
 * (direct asks plainly, diplomatic asks with room to say no, analytical lays
 * out the facts, expressive shows feeling), formality the register, warmth
 * what is said about the reader's time.
 */
export function realise(intent: Intent, voice: Voice): string[] {
  const { style, warm } = voice;
  switch (intent.kind) {
    case 'invite': {
      const occasion = intent.occasion;
      const meal = MEALS.test(occasion);
      const come = meal ? `come over for ${occasion}` : occasion ? `come to ${occasion}` : 'come over';
      const invitation = meal ? `to ${occasion}` : occasion ? `to ${occasion}` : 'over';
      const reply = warm
        ? register(
            voice,
            "No pressure at all if you're busy, just let me know.",
            'Please do not feel obliged if you are busy; a short reply either way would be lovely.',
          )
        : register(voice, 'Let me know if you can make it.', 'Please let me know whether you are able to attend.');
      switch (style) {
        case 'direct':
          return [register(voice, `Can you ${come}?`, `I would like to invite you ${invitation}.`), reply];
        case 'analytical':
          return [
            register(voice, `I'd like to invite you ${invitation}.`, `I would like to invite you ${invitation}.`),
            register(
              voice,
              'If the time does not suit you, tell me what would and I will plan around it.',
              'Should the date not suit you, please suggest another and I will arrange accordingly.',
            ),
            reply,
          ];
        case 'expressive':
          return [
            register(
              voice,
              `I'd love to have you ${meal ? `over for ${occasion}` : occasion ? `at ${occasion}` : 'over'}!`,
              `It would be a real pleasure to have you ${meal ? `join us for ${occasion}` : occasion ? `at ${occasion}` : 'visit'}.`,
            ),
            register(voice, "It's been too long and it would be so good to see you.", 'It would be wonderful to see you.'),
            reply,
          ];
        case 'diplomatic':
        default:
          return [
            register(
              voice,
              `Would you like to ${come}?`,
              `Would you be able to join me ${meal ? `for ${occasion}` : invitation === 'over' ? '' : `at ${occasion}`}?`.replace(
                ' ?',
                '?',
              ),
            ),
            reply,
          ];
      }
    }
    case 'ask_to':
    case 'ask_for': {
      const action = intent.kind === 'ask_to' ? intent.action : `send me ${intent.thing}`;
      const room = warm ? register(voice, ' No rush if you have a lot on.', ' I appreciate that you are busy.') : '';
      switch (style) {
        case 'direct':
          return [`Please ${action}.${room}`];
        case 'analytical':
          return [
            `Could you ${action}?`,
            register(voice, 'That way I can plan the next steps.', 'That would allow me to plan the next steps.') + room,
          ];
        case 'expressive':
          return [register(voice, `Could you ${action}? That would be amazing!`, `I would be so grateful if you could ${action}.`) + room];
        case 'diplomatic':
        default:
          return [register(voice, `Would you be able to ${action}?`, `I would be grateful if you could ${action}.`) + room];
      }
    }
    case 'ask_whether': {
      const question = asQuestion(intent.clause);
      const direct = question ? `${cap(question)}?` : `Could you tell me whether ${intent.clause}?`;
      switch (style) {
        case 'direct':
          return [direct];
        case 'analytical':
          return [
            `Could you confirm whether ${intent.clause}?`,
            register(voice, 'A yes or no is all I need.', 'A brief yes or no would suffice.'),
          ];
        case 'expressive':
          return [register(voice, `${direct} I'd love to know!`, `I would love to know whether ${intent.clause}.`)];
        case 'diplomatic':
        default:
          return [
            register(
              voice,
              `I was wondering whether ${intent.clause}?`.replace(/\?$/, '.'),
              `Could you kindly let me know whether ${intent.clause}?`,
            ),
          ];
      }
    }
    case 'ask_about': {
      switch (style) {
        case 'direct':
          return [register(voice, `How is ${intent.topic} going?`, `Could you give me an update on ${intent.topic}?`)];
        case 'analytical':
          return [`Could you give me an update on ${intent.topic}: where it stands, and what comes next?`];
        case 'expressive':
          return [
            register(
              voice,
              `How is ${intent.topic} going? I'd love to hear all about it!`,
              `I would love to hear how ${intent.topic} is going.`,
            ),
          ];
        case 'diplomatic':
        default:
          return [
            register(
              voice,
              `When you have a moment, how is ${intent.topic} going?`,
              `When convenient, could you let me know how ${intent.topic} is progressing?`,
            ),
          ];
      }
    }
    case 'tell': {
      const s = intent.statement;
      switch (style) {
        case 'direct':
          return [`${cap(s)}.`];
        case 'analytical':
          return [register(voice, `A quick update: ${s}.`, `For your information: ${s}.`)];
        case 'expressive':
          return [register(voice, `I wanted to share this with you: ${s}!`, `I am pleased to let you know that ${s}.`)];
        case 'diplomatic':
        default:
          return [register(voice, `I wanted to let you know that ${s}.`, `I am writing to let you know that ${s}.`)];
      }
    }
    case 'thank': {
      const r = intent.reason;
      switch (style) {
        case 'direct':
          return [register(voice, `Thanks for ${r}.`, `Thank you for ${r}.`)];
        case 'expressive':
          return [
            register(
              voice,
              `Thank you so much for ${r}! It really made my day.`,
              `Thank you so very much for ${r}; it meant a great deal to me.`,
            ),
          ];
        case 'analytical':
          return [`Thank you for ${r}.`, register(voice, 'It made a real difference.', 'It made a measurable difference.')];
        case 'diplomatic':
        default:
          return [
            register(voice, `Thank you so much for ${r}.`, `Thank you very much for ${r}.`),
            warm ? register(voice, 'I really appreciate it.', 'It is greatly appreciated.') : '',
          ].filter(Boolean);
      }
    }
    case 'remind': {
      const w = intent.what;
      switch (style) {
        case 'direct':
          return [/^to\b/i.test(w) ? `Reminder: please ${w.replace(/^to\s+/i, '')}.` : `Reminder ${w}.`];
        case 'expressive':
          return [register(voice, `Just a friendly reminder ${w}!`, `This is a friendly reminder ${w}.`)];
        case 'analytical':
          return [register(voice, `A reminder ${w}.`, `This is a reminder ${w}.`)];
        case 'diplomatic':
        default:
          return [register(voice, `Just a gentle reminder ${w}, whenever you have a moment.`, `May I gently remind you ${w}.`)];
      }
    }
    case 'apologise': {
      const r = intent.reason;
      switch (style) {
        case 'direct':
          return [register(voice, `Sorry for ${r}.`, `I apologise for ${r}.`)];
        case 'expressive':
          return [register(voice, `I'm so sorry for ${r}!`, `I am truly sorry for ${r}.`)];
        case 'analytical':
          return [
            register(voice, `I'm sorry for ${r}.`, `I apologise for ${r}.`),
            register(voice, "Here's what I'll do so it doesn't happen again.", 'I will take steps to ensure it does not happen again.'),
          ];
        case 'diplomatic':
        default:
          return [
            register(
              voice,
              `I'm really sorry for ${r}, and thank you for your patience.`,
              `Please accept my apologies for ${r}, and thank you for your patience.`,
            ),
          ];
      }
    }
    case 'congratulate': {
      const r = intent.reason;
      if (style === 'expressive')
        return [
          register(voice, `Huge congratulations on ${r}! That's fantastic news!`, `Warmest congratulations on ${r}; it is wonderful news.`),
        ];
      if (style === 'direct') return [`Congratulations on ${r}!`];
      return [
        register(voice, `Congratulations on ${r}!`, `Congratulations on ${r}.`),
        warm ? register(voice, 'You really deserve it.', 'It is very well deserved.') : '',
      ].filter(Boolean);
    }
    case 'follow_up': {
      const t = intent.topic;
      switch (style) {
        case 'direct':
          return [register(voice, `Following up on ${t}.`, `I am following up on ${t}.`)];
        case 'diplomatic':
          return [
            register(
              voice,
              `I wanted to follow up on ${t}, when you have a moment.`,
              `I am writing to follow up on ${t}, at your convenience.`,
            ),
          ];
        default:
          return [register(voice, `I'm following up on ${t}.`, `I am writing to follow up on ${t}.`)];
      }
    }
    case 'verbatim':
      return [intent.sentence];
  }
}
