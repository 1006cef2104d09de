import { decodeJwt, decodeProtectedHeader } from 'jose';
import { defineRuntime, FromSchema, fullSchema, resolveCapabilities } from '../src';
import { fixtures, RuntimeTestKit } from '../src/testing';
import { bank, ledger } from './bank';

/** The test kit calls a runtime as the service would, and its fixtures come from the descriptor's examples. */
describe('test kit', () => {
  it('mints tokens with the service’s header and claims', async () => {
    const kit = await RuntimeTestKit.create({ serviceUrl: 'https://api.example.com', appId: 'app_kit' });
    const token = await kit.token({ userId: 'usr_a', installId: 'inst_b', requestId: 'req_c', scopes: ['x:y'], livemode: false });
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', typ: 'runtime+jwt', kid: kit.kid });
    const claims = decodeJwt(token);
    expect(claims).toMatchObject({
      iss: 'https://api.example.com',
      aud: 'app_kit',
      sub: 'usr_a',
      uid: 'usr_a',
      iid: 'inst_b',
      rid: 'req_c',
      scope: 'x:y',
      livemode: false,
      jti: expect.any(String),
    });
    expect((claims.exp as number) - (claims.iat as number)).toBe(300);
    expect(kit.jwks.keys).toEqual([expect.objectContaining({ kty: 'EC', crv: 'P-256', kid: kit.kid })]);
  });

  it('answers the descriptor’s examples as fixtures, and a runtime answering them passes them back', async () => {
    const all = fixtures(bank);
    expect(all).toEqual([
      { capability: 'balance', mode: 'state', request: { account: 'checking' }, response: { available: 1520.75, currency: 'EUR' } },
      {
        capability: 'transfer',
        mode: 'action',
        request: { toAccount: 'DE89370400440532013000', amount: 25, currency: 'EUR' },
        response: { transferId: 'tr_1', state: 'completed' },
      },
      { capability: 'ticker', mode: 'realtime', request: {}, response: { rate: 1.08 } },
    ]);
    const kit = await RuntimeTestKit.create();
    const runtime = defineRuntime({
      descriptor: bank,
      serviceUrl: kit.serviceUrl,
      appId: kit.appId,
      keys: kit.jwks,
      handlers: {
        balance: async () => ({ data: { available: 1520.75, currency: 'EUR' } }),
        transfer: async () => ({ result: { transferId: 'tr_1', state: 'completed' as const }, message: 'Sent.' }),
        transactions: async () => ({ items: ledger.slice(0, 1) }),
        ticker: () => undefined,
      },
    });
    for (const fixture of all.filter((f) => f.mode !== 'realtime')) {
      const call = fixture.mode === 'action' ? { input: fixture.request } : { params: fixture.request };
      const { status, body } = await kit.execute(runtime, fixture.capability, call);
      expect(status).toBe(200);
      expect(fixture.mode === 'action' ? body.result : body.data).toEqual(fixture.response);
    }
  });

  it('reads short-form schemas and names unnamed capabilities as the service does', () => {
    expect(fullSchema({ account: { type: 'string', required: true }, note: { type: 'string' } })).toEqual({
      type: 'object',
      properties: { account: { type: 'string' }, note: { type: 'string' } },
      required: ['account'],
    });
    const names = resolveCapabilities({
      capabilities: [
        { type: 'state', schema: {} },
        { type: 'state', name: 'state_2', schema: {} },
        { type: 'state', schema: {} },
      ],
    }).map((c) => c.name);
    expect(names).toEqual(['state', 'state_2', 'state_3']);
  });

  it('types params and results from schemas written as const', () => {
    type Balance = FromSchema<(typeof bank)['capabilities'][0]['schema']>;
    type History = FromSchema<(typeof bank)['capabilities'][2]['schema']>;
    const balance: Balance = { account: 'savings' };
    const history: History = { account: 'x' };
    // @ts-expect-error: not one of the enum's values
    const wrong: Balance = { account: 'brokerage' };
    // @ts-expect-error: account is required
    const missing: History = {};
    expect([balance, history, wrong, missing]).toHaveLength(4);
  });
});
