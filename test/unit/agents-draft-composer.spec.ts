import { DraftComposer, DraftRequest, recipientNameFromEmail, splitSentences } from '../../src/modules/agents/actions/draft-composer';
import { toSecondPerson } from '../../src/modules/agents/actions/draft-instructions';
import { suggestReplies } from '../../src/modules/agents/actions/reply-suggester';
import { summarizeConversation } from '../../src/modules/agents/actions/conversation-summarizer';
import { SoulTraits } from '../../src/modules/soul/soul-traits';

const composer = new DraftComposer();
const base: SoulTraits = { communication_style: 'diplomatic', humour: 'none', formality: 0.5, empathy: 0.5 };
const request = (traits: Partial<SoulTraits> | null, overrides: Partial<DraftRequest> = {}): DraftRequest => ({
  traits: traits === null ? null : { ...base, ...traits },
  senderName: 'Grace Hopper',
  to: 'jane.doe@example.com',
  subject: 'Quarterly report',
  context: 'The numbers for Q3 are in. Could you send me the final report by Friday? The board meets on Monday.',
  ...overrides,
});
const draft = (traits: Partial<SoulTraits> | null, overrides: Partial<DraftRequest> = {}) => composer.compose(request(traits, overrides));

describe('DraftComposer', () => {
  describe('formality picks the greeting and the sign-off', () => {
    it('casual below 0.35: "Hi <first name>," and "Cheers," signed with the first name', () => {
      const text = draft({ formality: 0.1 });
      expect(text.startsWith('Hi Jane,\n\n')).toBe(true);
      expect(text.endsWith('Cheers,\nGrace')).toBe(true);
    });

    it('neutral from 0.35 to 0.7: "Hello <name>," and "Best regards,"', () => {
      for (const formality of [0.35, 0.5, 0.7]) {
        const text = draft({ formality });
        expect(text.startsWith('Hello Jane Doe,\n\n')).toBe(true);
        expect(text.endsWith('Best regards,\nGrace Hopper')).toBe(true);
      }
    });

    it('formal above 0.7: "Dear <name>," and "Kind regards,"', () => {
      const text = draft({ formality: 0.9 });
      expect(text.startsWith('Dear Jane Doe,\n\n')).toBe(true);
      expect(text.endsWith('Kind regards,\nGrace Hopper')).toBe(true);
    });
  });

  describe('empathy', () => {
    it('above 0.6 opens and closes considerately', () => {
      const text = draft({ empathy: 0.8, formality: 0.9 });
      expect(text).toContain('I hope this message finds you well.');
      expect(text).toContain('Please do not hesitate to let me know if there is anything I can do to assist.');
    });

    it('below 0.3 goes straight to the point', () => {
      const text = draft({ empathy: 0.1 });
      expect(text.split('\n\n')[1]).toMatch(/^The numbers for Q3/);
      expect(text).not.toMatch(/hope|Thank|anything I can do/);
    });

    it('in between thanks without the considerate lines', () => {
      const text = draft({ empathy: 0.5 });
      expect(text).toContain('Thanks in advance.');
      expect(text).not.toContain('hope');
    });
  });

  describe('communication style', () => {
    it('direct puts the ask first, as a plain request in short sentences', () => {
      const body = draft({ communication_style: 'direct', empathy: 0.1 }).split('\n\n')[1];
      expect(body).toBe('Please send me the final report by Friday. The numbers for Q3 are in. The board meets on Monday.');
    });

    it('direct splits long sentences and drops fillers', () => {
      const body = draft(
        { communication_style: 'direct', empathy: 0.1 },
        { context: 'I just wanted to share the plan, and the budget is really tight; we start in May.' },
      ).split('\n\n')[1];
      expect(body).toBe('I wanted to share the plan. And the budget is tight. We start in May.');
    });

    it('diplomatic softens requests', () => {
      const text = draft({ communication_style: 'diplomatic' }, { context: 'Please review the draft. I need the figures by Monday.' });
      expect(text).toContain('Would you be able to review the draft?');
      expect(text).toContain('I need the figures by Monday, if that works for you.');
      expect(draft({ communication_style: 'diplomatic' })).toContain('Would you be able to send me the final report by Friday?');
    });

    it('analytical numbers the points of the context', () => {
      const text = draft({ communication_style: 'analytical' });
      expect(text).toContain(
        'Here are the key points:\n1. The numbers for Q3 are in.\n2. Could you send me the final report by Friday?\n3. The board meets on Monday.',
      );
    });

    it('expressive uses warmer words and an enthusiastic frame', () => {
      const text = draft({ communication_style: 'expressive' }, { context: 'The results are good. It was a nice surprise.' });
      expect(text).toContain("I'm really excited to share this with you!");
      expect(text).toContain('The results are wonderful. It was a lovely surprise.');
      expect(text).toContain("I'd love to hear what you think!");
    });
  });

  describe('humour', () => {
    it('playful and witty add a light line; none and dry do not', () => {
      expect(draft({ humour: 'playful' })).toContain('P.S. I promise this email is shorter than my to-do list!');
      expect(draft({ humour: 'witty' })).toContain('carrier pigeon');
      for (const humour of ['none', 'dry'] as const) expect(draft({ humour })).not.toContain('P.S.');
    });
  });

  it('gives different drafts for different souls and the same draft for the same soul', () => {
    const casual = draft({ formality: 0.1, communication_style: 'direct', humour: 'playful', empathy: 0.1 });
    const formal = draft({ formality: 0.9, communication_style: 'analytical', humour: 'none', empathy: 0.9 });
    expect(casual).not.toBe(formal);
    expect(draft({ formality: 0.1 })).toBe(draft({ formality: 0.1 }));
  });

  it('uses neutral defaults when the user has no soul record', () => {
    const text = draft(null);
    expect(text.startsWith('Hello Jane Doe,')).toBe(true);
    expect(text.endsWith('Best regards,\nGrace Hopper')).toBe(true);
  });

  it('prefers a known recipient name and falls back to a generic greeting for role mailboxes', () => {
    expect(draft({ formality: 0.9 }, { recipientName: 'Dr. Jane Smith' }).startsWith('Dear Dr. Jane Smith,')).toBe(true);
    expect(draft({ formality: 0.9 }, { to: 'info@example.com' }).startsWith('Dear Sir or Madam,')).toBe(true);
    expect(draft({ formality: 0.1 }, { to: 'support@example.com' }).startsWith('Hi there,')).toBe(true);
  });

  it('ends with the bare sign-off when the sender has no name', () => {
    expect(draft({ formality: 0.1 }, { senderName: null }).endsWith('\n\nCheers,')).toBe(true);
  });
});

describe('DraftComposer: instructions become a message (issue 23)', () => {
  const bob = (traits: Partial<SoulTraits> | null, context: string) =>
    draft(traits, { to: 'bob@example.com', subject: 'Dinner', context, senderName: 'Grace Hopper' });
  const body = (text: string) => text.split('\n\n').slice(1, -1).join('\n\n');

  it('writes "invite Bob to dinner" as an invitation to Bob, not an echo of the instruction', () => {
    const text = bob({}, 'invite Bob to dinner at my place on Friday');
    expect(text).toBe(
      'Hello Bob,\n\nWould you like to come over for dinner at my place on Friday? Let me know if you can make it.\n\nBest regards,\nGrace Hopper',
    );
    expect(text).not.toMatch(/invite Bob/i);
  });

  it('lets the communication style change the sentence itself, not only the stock lines around it', () => {
    const sentence = (style: SoulTraits['communication_style']) =>
      body(bob({ communication_style: style, empathy: 0.5 }, 'invite Bob to dinner on Friday')).split('\n\n')[0];
    expect(sentence('diplomatic')).toMatch(/^Would you like to come over for dinner on Friday\?/);
    expect(sentence('direct')).toMatch(/^Can you come over for dinner on Friday\?/);
    expect(sentence('analytical')).toMatch(/^I'd like to invite you to dinner on Friday\. If the time does not suit you/);
    expect(sentence('expressive')).toMatch(/^I'd love to have you over for dinner on Friday!/);
    expect(new Set((['diplomatic', 'direct', 'analytical', 'expressive'] as const).map(sentence)).size).toBe(4);
  });

  it('writes a formal voice without contractions and a casual one with them', () => {
    const formal = body(bob({ formality: 0.9, communication_style: 'expressive' }, 'invite Bob to dinner on Friday'));
    expect(formal).toContain('It would be a real pleasure to have you join us for dinner on Friday.');
    expect(formal).not.toMatch(/\b\w+'(?:d|ll|m|re|s|t|ve)\b/);
    const casual = body(bob({ formality: 0.1, communication_style: 'expressive' }, 'invite Bob to dinner on Friday'));
    expect(casual).toContain("I'd love to have you over for dinner on Friday!");
  });

  it('lets empathy change what is said about the reader: a warm invitation leaves room to say no', () => {
    expect(bob({ empathy: 0.9 }, 'invite Bob to dinner')).toContain("No pressure at all if you're busy, just let me know.");
    expect(bob({ empathy: 0.1 }, 'invite Bob to dinner')).toContain('Let me know if you can make it.');
    expect(bob({ empathy: 0.9 }, 'ask Bob to send me the slides')).toContain('No rush if you have a lot on.');
  });

  it('speaks to the recipient: third-person mentions become "you" and "your"', () => {
    expect(bob({}, 'thank Bob for his help with the move')).toContain('Thank you so much for your help with the move.');
    expect(bob({ communication_style: 'direct' }, 'ask Bob if he is free on Saturday')).toContain('Are you free on Saturday?');
    expect(bob({}, 'ask him if he wants to join')).toContain('I was wondering whether you want to join.');
    expect(bob({}, 'congratulate Bob on his new job')).toContain('Congratulations on your new job!');
    expect(bob({ formality: 0.9 }, 'apologise to Bob for missing his call')).toContain('Please accept my apologies for missing your call');
  });

  it("reads requests, reminders, news and follow-ups in the sender's style", () => {
    expect(bob({ communication_style: 'direct' }, 'Please ask Bob to send me the slides by Monday.')).toContain(
      'Please send me the slides by Monday.',
    );
    expect(bob({ communication_style: 'diplomatic' }, 'ask Bob for the slides')).toContain('Would you be able to send me the slides?');
    expect(bob({ communication_style: 'direct' }, 'remind him to bring the tickets')).toContain('Reminder: please bring the tickets.');
    expect(bob({}, 'tell Bob that the meeting moved to 3pm')).toContain('I wanted to let you know that the meeting moved to 3pm.');
    expect(bob({ communication_style: 'analytical' }, 'let Bob know the build is green')).toContain('A quick update: the build is green.');
    expect(bob({}, 'follow up on the contract')).toContain('I wanted to follow up on the contract, when you have a moment.');
  });

  it('splits several instructions in one sentence and numbers them for an analytical writer', () => {
    const context = 'invite Bob to lunch on Sunday and ask him to bring the photos';
    expect(body(bob({ communication_style: 'direct' }, context))).toBe(
      'Can you come over for lunch on Sunday? Let me know if you can make it. Please bring the photos.\n\nThanks in advance.',
    );
    expect(bob({ communication_style: 'analytical' }, context)).toContain("A few points:\n1. I'd like to invite you to lunch on Sunday.");
    expect(bob({ communication_style: 'analytical' }, context)).toContain('\n2. Could you bring the photos?');
  });

  it('addresses a group named in the instruction ("the team") as "you"', () => {
    const text = draft({}, { to: 'team@example.com', context: 'invite the team to the Fortran class on Friday' });
    expect(text).toContain('Would you like to come to the Fortran class on Friday?');
    expect(text.startsWith('Hello,')).toBe(true);
  });

  it('keeps sentences that are not instructions, styled as before', () => {
    const text = bob({ communication_style: 'diplomatic' }, 'invite Bob to dinner on Friday. Anna is cooking.');
    expect(text).toContain('Would you like to come over for dinner on Friday?');
    expect(text).toContain('Anna is cooking.');
  });

  it('fits the humour line to an invitation', () => {
    expect(bob({ humour: 'playful' }, 'invite Bob to dinner')).toContain('P.S. I promise the cooking has improved since last time!');
    expect(bob({ humour: 'dry' }, 'invite Bob to dinner')).not.toContain('P.S.');
  });

  it('is deterministic', () => {
    expect(bob({ formality: 0.2 }, 'invite Bob to dinner on Friday')).toBe(bob({ formality: 0.2 }, 'invite Bob to dinner on Friday'));
  });
});

describe('toSecondPerson', () => {
  it.each([
    ['his wife', 'your wife'],
    ['if she is free', 'if you are free'],
    ["Bob's birthday", 'your birthday'],
    ['when he wants', 'when you want'],
    ['give her the keys', 'give you the keys'],
    ['her report', 'your report'],
  ])('%s → %s', (text, expected) => expect(toSecondPerson(text, 'Bob')).toBe(expected));
});

describe('recipientNameFromEmail', () => {
  it.each([
    ['jane.doe@example.com', 'Jane Doe'],
    ['JANE_DOE+news@example.com', 'Jane Doe'],
    ['j-doe42@example.com', 'J Doe'],
    ['grace@example.com', 'Grace'],
    ['info@example.com', null],
    ['12345@example.com', null],
  ])('%s → %s', (email, name) => expect(recipientNameFromEmail(email)).toBe(name));
});

describe('splitSentences', () => {
  it('splits on sentence ends and lines, drops list markers and adds missing punctuation', () => {
    expect(splitSentences('First point. Second one!\n- third item\n2) fourth')).toEqual([
      'First point.',
      'Second one!',
      'third item.',
      'fourth.',
    ]);
  });
});

describe('suggestReplies', () => {
  const suggest = (traits: Partial<SoulTraits> | null, latestInbound: string | null) =>
    suggestReplies({ traits: traits === null ? null : { ...base, ...traits }, contactName: 'Jane Doe', latestInbound });

  it('gives 2 to 3 replies, casual or formal by formality', () => {
    const casual = suggest({ formality: 0.1 }, 'Are you free tomorrow?');
    const formal = suggest({ formality: 0.9 }, 'Are you free tomorrow?');
    for (const list of [casual, formal]) {
      expect(list.length).toBeGreaterThanOrEqual(2);
      expect(list.length).toBeLessThanOrEqual(3);
    }
    expect(casual[0]).toContain("I'll get back to you");
    expect(formal[0]).toContain('I will look into it');
  });

  it('suggests openers addressed to the contact when nothing came in', () => {
    expect(suggest({ formality: 0.1 }, null)[0]).toBe('Hey Jane! How have you been?');
    expect(suggest({ formality: 0.9 }, null)[0]).toBe('Hello Jane Doe, I hope you are well.');
  });

  it('is shaped by empathy, style and humour', () => {
    expect(suggest({ empathy: 0.9, formality: 0.1 }, 'Sorry I missed the call')[0]).toMatch(/^Really, it’s fine\./);
    expect(suggest({ communication_style: 'direct' }, 'Want to join us for lunch?')).toHaveLength(2);
    expect(suggest({ communication_style: 'expressive', formality: 0.1 }, 'Thanks for yesterday').join(' ')).not.toMatch(/\.(\s|$)/);
    expect(suggest({ humour: 'playful' }, 'Thanks!').at(-1)).toMatch(/😄$/);
  });
});

describe('summarizeConversation', () => {
  it('counts, spans and quotes the conversation (messages arrive newest first)', () => {
    const summary = summarizeConversation({
      contact: { id: 'con_x', name: 'Jane' },
      messages: [
        { id: 'msg_3', direction: 'inbound', content: 'Can you send the budget report?', created_at: '2025-03-02T10:00:00.000Z' },
        { id: 'msg_2', direction: 'outbound', content: 'The budget looks fine to me.', created_at: '2025-03-01T12:00:00.000Z' },
        { id: 'msg_1', direction: 'outbound', content: 'Here is the budget draft.', created_at: '2025-03-01T09:00:00.000Z' },
      ],
    });
    expect(summary).toMatchObject({ message_count: 3, first_at: '2025-03-01T09:00:00.000Z', last_at: '2025-03-02T10:00:00.000Z' });
    expect(summary.summary).toContain('3 messages with Jane between 2025-03-01 and 2025-03-02 (2 from you, 1 from Jane).');
    expect(summary.summary).toContain('Frequent topics: budget.');
    expect(summary.summary).toContain('Latest, from Jane on 2025-03-02: "Can you send the budget report?"');
    expect(summary.summary).toContain('waiting for your reply');
  });

  it('says so when there are no messages', () => {
    expect(summarizeConversation({ contact: { id: 'con_x', name: 'Jane' }, messages: [] })).toEqual({
      summary: 'No messages with Jane yet.',
      message_count: 0,
      first_at: null,
      last_at: null,
    });
  });
});
