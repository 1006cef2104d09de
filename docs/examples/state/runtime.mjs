// Example runtime for a `state` capability: `balance`, the user's available balance (docs/examples/state/package.json).
//
// The service polls `POST /capabilities/balance/execute` every `refreshInterval` seconds for each install, caches the
// answer for `ttl` seconds and shows it on the user's home widget. Run it with:
//
//   SERVICE_URL=https://api.example.com APP_ID=app_… TLS_CERT=cert.pem TLS_KEY=key.pem node runtime.mjs
import { capabilityDescriptor, envelopeProblems, RuntimeError, schemaProblems, startRuntime } from '../shared/runtime.mjs';

const balance = capabilityDescriptor(import.meta.url, 'balance');

// Test traffic (conformance runs, `livemode: false`) is answered from these fixtures, never from real accounts.
const FIXTURES = { checking: { available: 1520.75, currency: 'EUR' }, savings: { available: 8000, currency: 'EUR' } };

// Stands in for your real backend: balances by user id (`sub` of the runtime token).
const LIVE_ACCOUNTS = new Map();
function liveBalance(userId, account) {
  if (!LIVE_ACCOUNTS.has(userId)) LIVE_ACCOUNTS.set(userId, { checking: 2315.4, savings: 10250 });
  return { available: LIVE_ACCOUNTS.get(userId)[account], currency: 'EUR' };
}

await startRuntime({
  capabilities: {
    balance: {
      mode: 'state',
      async execute({ body, headers, claims, live }) {
        // Refuse what does not fit the declared schema with INVALID_PARAMS (400, not retryable).
        const problems = [...envelopeProblems('balance', 'state', body, headers), ...schemaProblems(balance.schema, body.params)];
        if (problems.length > 0) throw new RuntimeError('INVALID_PARAMS', problems.join('; '));
        // Act only for the user the token names: `X-Service-User-Id` must be that user.
        if (headers['x-service-user-id'] !== claims.sub) throw new RuntimeError('PERMISSION_DENIED', 'the user does not match the token');

        const { account } = body.params;
        return {
          status: 'ok',
          // Fields in the order the widget should show them (docs/components.md).
          data: live ? liveBalance(claims.sub, account) : FIXTURES[account],
          // Seconds the service may serve this answer from its cache.
          ttl: 300,
          metadata: { source: live ? 'core-banking' : 'fixtures', fetchedAt: new Date().toISOString() },
        };
      },
    },
  },
});
