// Example runtime for an `action` capability: `transfer`, which sends money (docs/examples/action/package.json).
//
// The service calls `POST /capabilities/transfer/execute` only after the user confirmed the transfer in the app, with
// `X-Service-Idempotency-Key`. A retry of the same call carries the same key: do the work once and answer the stored
// result again; the same key with different input is a CONFLICT (409). Run it with:
//
//   SERVICE_URL=https://api.example.com APP_ID=app_… TLS_CERT=cert.pem TLS_KEY=key.pem node runtime.mjs
import { createHash } from 'node:crypto';
import { capabilityDescriptor, envelopeProblems, RuntimeError, schemaProblems, startRuntime } from '../shared/runtime.mjs';

const transfer = capabilityDescriptor(import.meta.url, 'transfer');

// Results by idempotency key, with a hash of the input they were made for. Keep them in your database for at least
// as long as the service may retry (the service holds a key for 15 minutes); a Map is enough for an example.
// Test and live keys are kept apart so a conformance run can never replay or block a real transfer.
const DONE = new Map();
// Stands in for your bank's ledger: the transfers really made (live traffic only).
const LEDGER = [];

const canonical = (value) =>
  value && typeof value === 'object' && !Array.isArray(value)
    ? `{${Object.keys(value)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`)
        .join(',')}}`
    : JSON.stringify(value);
const hashOf = (input) => createHash('sha256').update(canonical(input)).digest('hex');

function send(input, userId) {
  LEDGER.push({ ...input, userId, at: new Date().toISOString() });
  return { transferId: `tr_${String(LEDGER.length).padStart(4, '0')}`, state: 'completed' };
}

await startRuntime({
  capabilities: {
    transfer: {
      mode: 'action',
      async execute({ body, headers, claims, live }) {
        const problems = [
          ...envelopeProblems('transfer', 'action', body, headers),
          ...schemaProblems(transfer.schema, body.input, 'input'),
        ];
        if (problems.length > 0) throw new RuntimeError('INVALID_PARAMS', problems.join('; '));

        const key = `${live ? 'live' : 'test'}:${claims.aud}:${headers['x-service-idempotency-key']}`;
        const hash = hashOf(body.input);
        const done = DONE.get(key);
        if (done && done.hash !== hash) throw new RuntimeError('CONFLICT', 'this idempotency key was used with different input');
        if (done) return done.answer;

        // Test traffic (`livemode: false`, conformance) must not move money: answer from a fixture.
        const result = live ? send(body.input, claims.sub) : { transferId: `tr_test_${DONE.size + 1}`, state: 'completed' };
        const { amount, currency } = body.input;
        const answer = {
          status: 'ok',
          result,
          // Shown to the user after the action completed.
          message: live ? `Sent ${amount} ${currency}.` : `Test transfer of ${amount} ${currency}: nothing was sent.`,
        };
        DONE.set(key, { hash, answer });
        return answer;
      },
    },
  },
});
