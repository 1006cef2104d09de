// Example runtime for a `history` capability: `transactions`, booked transactions newest first
// (docs/examples/history/package.json).
//
// The service passes `limit`, `cursor` and `direction` through untouched: the cursor is yours and opaque to the
// service. Answer a page of items, `cursor.next` (null on the last page), `cursor.hasMore` and `totalCount`. Run it with:
//
//   SERVICE_URL=https://api.example.com APP_ID=app_… TLS_CERT=cert.pem TLS_KEY=key.pem node runtime.mjs
import { Buffer } from 'node:buffer';
import { capabilityDescriptor, envelopeProblems, RuntimeError, schemaProblems, startRuntime } from '../shared/runtime.mjs';

const transactions = capabilityDescriptor(import.meta.url, 'transactions');

/** Transactions newest first, made up from a seed: the fixtures of test traffic, and a stand-in for your database. */
function statement(count, seed) {
  return Array.from({ length: count }, (_, i) => ({
    id: `${seed}_${String(count - i).padStart(3, '0')}`,
    amount: (count - i) % 3 === 0 ? 1000 : -(10 + (count - i) * 1.5),
    counterparty: ['Bakery', 'Employer', 'Rent', 'Bookshop'][i % 4],
    bookedAt: new Date(Date.UTC(2024, 0, count - i, 9, 30)).toISOString(),
  }));
}
const FIXTURES = { checking: statement(25, 'tx'), savings: statement(3, 'tx_sav') };
const LIVE = { checking: statement(12, 'tx_live'), savings: statement(2, 'tx_live_sav') };

// The cursor encodes where the next page starts. Base64url JSON keeps it opaque to the service and easy to change.
const encodeCursor = (offset) => Buffer.from(JSON.stringify({ offset })).toString('base64url');
function decodeCursor(cursor) {
  if (cursor === undefined) return 0;
  try {
    const { offset } = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Number.isInteger(offset) && offset >= 0) return offset;
  } catch {
    // fall through
  }
  throw new RuntimeError('INVALID_PARAMS', 'params.cursor is not a cursor this runtime gave out');
}

await startRuntime({
  capabilities: {
    transactions: {
      mode: 'history',
      async execute({ body, headers, live }) {
        const problems = [
          ...envelopeProblems('transactions', 'history', body, headers),
          ...schemaProblems(transactions.schema, body.params),
        ];
        if (problems.length > 0) throw new RuntimeError('INVALID_PARAMS', problems.join('; '));

        const { account, limit = 10, cursor } = body.params;
        const all = (live ? LIVE : FIXTURES)[account];
        const offset = decodeCursor(cursor);
        const hasMore = offset + limit < all.length;
        return {
          status: 'ok',
          items: all.slice(offset, offset + limit),
          cursor: { next: hasMore ? encodeCursor(offset + limit) : null, hasMore },
          totalCount: all.length,
        };
      },
    },
  },
});
