/** A small banking package, one capability per mode the service calls, written `as const` as a provider would. */
export const bank = {
  name: 'Acme Bank',
  slug: 'acme-bank',
  capabilities: [
    {
      type: 'state',
      name: 'balance',
      description: 'Current available balance of one of the user’s bank accounts.',
      refreshInterval: 120,
      schema: {
        type: 'object',
        properties: { account: { type: 'string', enum: ['checking', 'savings'] } },
        required: ['account'],
        additionalProperties: false,
      },
      responseSchema: {
        type: 'object',
        properties: { available: { type: 'number' }, currency: { type: 'string' } },
        required: ['available', 'currency'],
      },
      examples: [{ params: { account: 'checking' }, response: { available: 1520.75, currency: 'EUR' } }],
    },
    {
      type: 'action',
      name: 'transfer',
      description: 'Sends money to another account after the user confirms it.',
      schema: {
        type: 'object',
        properties: {
          toAccount: { type: 'string', minLength: 15 },
          amount: { type: 'number', minimum: 0.01 },
          currency: { type: 'string', enum: ['EUR', 'USD'] },
        },
        required: ['toAccount', 'amount', 'currency'],
        additionalProperties: false,
      },
      responseSchema: {
        type: 'object',
        properties: { transferId: { type: 'string' }, state: { type: 'string', enum: ['completed', 'scheduled'] } },
        required: ['transferId', 'state'],
      },
      examples: [
        {
          input: { toAccount: 'DE89370400440532013000', amount: 25, currency: 'EUR' },
          response: { transferId: 'tr_1', state: 'completed' },
        },
      ],
    },
    {
      type: 'history',
      name: 'transactions',
      description: 'Booked transactions of one account, newest first.',
      schema: { account: { type: 'string', required: true } },
      responseSchema: {
        type: 'object',
        properties: { id: { type: 'string' }, amount: { type: 'number' } },
        required: ['id', 'amount'],
      },
    },
    {
      type: 'realtime',
      name: 'ticker',
      description: 'Live exchange rate of EUR to USD.',
      heartbeatInterval: 1,
      schema: { type: 'object', properties: {} },
      responseSchema: { type: 'object', properties: { rate: { type: 'number' } }, required: ['rate'] },
      examples: [{ data: { rate: 1.08 } }],
    },
    {
      type: 'webhook',
      name: 'meeting_updates',
      schema: { meetingId: { type: 'string', required: true } },
    },
  ],
} as const;

/** 25 transactions, newest first. */
export const ledger = Array.from({ length: 25 }, (_, i) => ({ id: `tx_${String(25 - i).padStart(3, '0')}`, amount: -(i + 1) }));
