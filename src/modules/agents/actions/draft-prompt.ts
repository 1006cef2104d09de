import { SoulTraits } from '../../soul/soul-traits';
import { ChatMessage } from './language-model';
import { formalityBand } from './draft-composer';

export interface DraftPromptInput {
  traits: SoulTraits;
  values: string[];
  senderName: string | null;
  to: string;
  recipientName: string | null;
  subject: string;
  context: string;
}

/** The chat messages asking a language model for the same draft the composer would write, in the sender's voice. */
export function draftPrompt(input: DraftPromptInput): ChatMessage[] {
  const { traits } = input;
  const system = [
    `You draft emails on behalf of ${input.senderName ?? 'the user'}, in their own voice.`,
    'Their personality (soul traits):',
    `- communication_style: ${traits.communication_style}`,
    `- humour: ${traits.humour}`,
    `- formality: ${traits.formality.toFixed(2)} (0 = casual, 1 = formal; ${formalityBand(traits.formality)})`,
    `- empathy: ${traits.empathy.toFixed(2)} (0 = matter-of-fact, 1 = warm and attentive to feelings)`,
    ...(input.values.length > 0 ? [`- values: ${input.values.join(', ')}`] : []),
    'Write only the email body: greeting, message and sign-off' +
      (input.senderName ? ` signed "${input.senderName}"` : '') +
      '. No subject line, no explanations, no placeholders.',
  ].join('\n');
  const user = [
    `To: ${input.recipientName ? `${input.recipientName} <${input.to}>` : input.to}`,
    `Subject: ${input.subject}`,
    'What the email should say:',
    input.context,
  ].join('\n');
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ];
}
