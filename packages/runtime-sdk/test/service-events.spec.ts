import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { WebhookVerificationError } from '@soul-service/webhooks';
import { createServiceEvents, ServiceEventError, ServiceEvents } from '../src';
import { serve } from './serve';

const secret = () => `whsec_${randomBytes(32).toString('base64')}`;
const PROBLEMS = 'https://docs.example.com/developers/errors#';

/** What the fake service answers an event with, one entry per request, then 202. */
type Scripted =
  | { status: number; code?: string; detail?: string; headers?: Record<string, string>; extra?: Record<string, unknown> }
  | { status: number; raw: string }
  | 'drop';

interface ReceivedEvent {
  rawBody: string;
  signature: string | undefined;
  token: string;
  sentRequestId: string | undefined;
}

/**
 * The two routes of the service that the client calls, on a real loopback
 * HTTP server: the token endpoint (client credentials over HTTP Basic) and
 * the inbound events endpoint, which checks the bearer token against those
 * it issued and answers scripted refusals before accepting.
 */
class FakeService {
  readonly tokenRequests: Array<{ basic: string; form: URLSearchParams }> = [];
  readonly events: ReceivedEvent[] = [];
  readonly script: Scripted[] = [];
  readonly issued = new Set<string>();
  /** False: every bearer token is refused as expired, also those issued after. */
  acceptsTokens = true;
  expiresIn = 3600;
  tokenAnswer: { status: number; body: unknown } | null = null;
  private server!: { url: string; close: () => Promise<void> };

  get url() {
    return this.server.url;
  }

  async start(): Promise<this> {
    this.server = await serve((req, res) => void this.handle(req, res));
    return this;
  }

  close() {
    return this.server.close();
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    const answer = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', 'x-service-request-id': `req_answer${this.events.length}`, ...headers });
      res.end(JSON.stringify(body));
    };
    if (req.url === '/v1/auth/token') {
      this.tokenRequests.push({ basic: req.headers.authorization ?? '', form: new URLSearchParams(rawBody) });
      if (this.tokenAnswer) return answer(this.tokenAnswer.status, this.tokenAnswer.body);
      const token = `tok_${this.tokenRequests.length}`;
      this.issued.add(token);
      return answer(200, { access_token: token, token_type: 'Bearer', expires_in: this.expiresIn, scope: 'events:write' });
    }
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const sentRequestId = req.headers['x-service-request-id'] as string | undefined;
    this.events.push({ rawBody, signature: req.headers['x-signature-256'] as string | undefined, token, sentRequestId });
    if (!this.acceptsTokens || !this.issued.has(token)) {
      return answer(401, { type: `${PROBLEMS}token_expired`, title: 'Token Expired', status: 401, detail: 'The access token has expired' });
    }
    const next = this.script.shift();
    if (next === 'drop') {
      res.socket?.destroy();
      return;
    }
    if (next && 'raw' in next) {
      res.writeHead(next.status, { 'content-type': 'text/html' });
      res.end(next.raw);
      return;
    }
    if (next) {
      const code = next.code ?? 'error';
      return answer(
        next.status,
        { type: `${PROBLEMS}${code}`, title: code, status: next.status, detail: next.detail ?? code, ...next.extra },
        next.headers,
      );
    }
    answer(202, { status: 'accepted', event_id: `evt_${this.events.length}`, processed_at: new Date().toISOString() });
  }
}

const meeting = (userId = 'usr_1') => ({
  event: 'meeting.updated',
  action: 'moved',
  timestamp: '2026-01-01T10:00:00.000Z',
  userId,
  data: { meetingId: 'mtg_1', startsAt: '2026-02-01T10:00:00Z' },
});

describe('ServiceEvents: pushing events to the service', () => {
  let service: FakeService;
  let signingSecret: string;
  let events: ServiceEvents;

  beforeEach(async () => {
    service = await new FakeService().start();
    signingSecret = secret();
    events = new ServiceEvents({ serviceUrl: `${service.url}/`, clientId: 'cid_abc', clientSecret: 'se:cret+/', signingSecret });
  });
  afterEach(() => service.close());

  it('posts the event in the documented shape, signed over the exact bytes with the signing secret', async () => {
    const ack = await events.send(meeting());
    expect(ack).toEqual({ status: 'accepted', event_id: 'evt_1', processed_at: expect.any(String) });
    const [received] = service.events;
    expect(received.rawBody).toBe(
      '{"event":"meeting.updated","action":"moved","timestamp":"2026-01-01T10:00:00.000Z","userId":"usr_1","data":{"meetingId":"mtg_1","startsAt":"2026-02-01T10:00:00Z"}}',
    );
    expect(received.signature).toBe(`sha256=${createHmac('sha256', signingSecret).update(received.rawBody).digest('hex')}`);
    // Another secret's HMAC differs: the header is keyed with this app's secret, not merely well-formed.
    expect(received.signature).not.toBe(`sha256=${createHmac('sha256', secret()).update(received.rawBody).digest('hex')}`);
  });

  it('asks for an events:write token with HTTP Basic, the id and secret form-encoded (RFC 6749 §2.3.1)', async () => {
    await events.send(meeting());
    expect(service.tokenRequests).toHaveLength(1);
    const { basic, form } = service.tokenRequests[0];
    expect(Buffer.from(basic.replace(/^Basic /, ''), 'base64').toString('utf8')).toBe('cid_abc:se%3Acret%2B%2F');
    expect(Object.fromEntries(form)).toEqual({ grant_type: 'client_credentials', scope: 'events:write' });
  });

  it('fetches the token once and reuses it, also for concurrent sends', async () => {
    await Promise.all([events.send(meeting('usr_1')), events.send(meeting('usr_2')), events.send(meeting('usr_3'))]);
    await events.send(meeting('usr_4'));
    expect(service.tokenRequests).toHaveLength(1);
    expect(service.events.map((e) => e.token)).toEqual(['tok_1', 'tok_1', 'tok_1', 'tok_1']);
  });

  it('renews the token shortly before expires_in runs out', async () => {
    service.expiresIn = 1; // renewed after half of a short lifetime
    await events.send(meeting());
    await events.send(meeting());
    expect(service.tokenRequests).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 600));
    await events.send(meeting());
    expect(service.tokenRequests).toHaveLength(2);
    expect(service.events.map((e) => e.token)).toEqual(['tok_1', 'tok_1', 'tok_2']);
  });

  it('renews the token once after a 401 token_expired and sends the same bytes again', async () => {
    await events.send(meeting());
    service.issued.clear(); // the service no longer takes tok_1 (expired early, or the client secret was rotated)
    const ack = await events.send(meeting('usr_2'));
    expect(ack.status).toBe('accepted');
    expect(service.tokenRequests).toHaveLength(2);
    expect(service.events.slice(1).map((e) => e.token)).toEqual(['tok_1', 'tok_2']);
    expect(service.events[1].rawBody).toBe(service.events[2].rawBody);
  });

  it('renews the token only once: a second 401 is thrown', async () => {
    await events.send(meeting());
    service.acceptsTokens = false;
    const error = (await events.send(meeting()).catch((e: unknown) => e)) as ServiceEventError;
    expect(error).toBeInstanceOf(ServiceEventError);
    expect(error).toMatchObject({ status: 401, code: 'token_expired', attempts: 2 });
    expect(service.tokenRequests).toHaveLength(2);
  });

  it('throws invalid_signature at once, with the problem, the request id and no token renewal', async () => {
    service.script.push({ status: 401, code: 'invalid_signature', detail: 'X-Signature-256 does not match the request body' });
    const error = (await events.send(meeting()).catch((e: unknown) => e)) as ServiceEventError;
    expect(error).toBeInstanceOf(ServiceEventError);
    expect(error).toMatchObject({
      name: 'ServiceEventError',
      status: 401,
      code: 'invalid_signature',
      type: `${PROBLEMS}invalid_signature`,
      detail: 'X-Signature-256 does not match the request body',
      message: 'X-Signature-256 does not match the request body',
      requestId: 'req_answer1',
      attempts: 1,
    });
    expect(service.events).toHaveLength(1);
    expect(service.tokenRequests).toHaveLength(1);
    expect(JSON.parse(JSON.stringify(error))).toMatchObject({ status: 401, code: 'invalid_signature', request_id: 'req_answer1' });
  });

  it('throws a 400 at once with its field errors', async () => {
    service.script.push({
      status: 400,
      code: 'invalid_format',
      detail: 'data does not match the schema of meeting.updated: must have required property startsAt',
      extra: {
        field: 'data',
        errors: [{ field: 'data', message: 'must have required property startsAt', code: 'invalid_format' }],
      },
    });
    const error = (await events.send(meeting()).catch((e: unknown) => e)) as ServiceEventError;
    expect(error).toMatchObject({
      status: 400,
      code: 'invalid_format',
      field: 'data',
      fieldErrors: [{ field: 'data', message: 'must have required property startsAt', code: 'invalid_format' }],
    });
    expect(service.events).toHaveLength(1);
  });

  it('retries a 429 after its Retry-After, with the same bytes', async () => {
    service.script.push({ status: 429, code: 'rate_limit_exceeded', headers: { 'retry-after': '1' } });
    const started = Date.now();
    const ack = await events.send(meeting());
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(ack.event_id).toBe('evt_2');
    expect(service.events).toHaveLength(2);
    expect(service.events[0].rawBody).toBe(service.events[1].rawBody);
    expect(service.events[0].signature).toBe(service.events[1].signature);
  });

  it('retries a 503 and gives up after three attempts with the last error', async () => {
    for (let i = 0; i < 3; i += 1) service.script.push({ status: 503, code: 'service_unavailable', headers: { 'retry-after': '0' } });
    const error = (await events.send(meeting()).catch((e: unknown) => e)) as ServiceEventError;
    expect(error).toMatchObject({ status: 503, code: 'service_unavailable', attempts: 3, retryAfterSeconds: 0, requestId: 'req_answer3' });
    expect(service.events).toHaveLength(3);
  });

  it('does not wait for a Retry-After beyond maxRetryWaitSeconds: the error says how long to wait', async () => {
    events = new ServiceEvents({ serviceUrl: service.url, clientId: 'cid_abc', clientSecret: 's', signingSecret, maxRetryWaitSeconds: 5 });
    service.script.push({ status: 429, code: 'rate_limit_exceeded', headers: { 'retry-after': '30' } });
    const error = (await events.send(meeting()).catch((e: unknown) => e)) as ServiceEventError;
    expect(error).toMatchObject({ status: 429, code: 'rate_limit_exceeded', retryAfterSeconds: 30, attempts: 1 });
    expect(service.events).toHaveLength(1);
  });

  it('does not retry a 500', async () => {
    service.script.push({ status: 500, code: 'internal_error' });
    await expect(events.send(meeting())).rejects.toMatchObject({ status: 500, code: 'internal_error' });
    expect(service.events).toHaveLength(1);
  });

  it('takes a 2xx without the acknowledgement (a proxy’s page) for a failure, not a success', async () => {
    service.script.push({ status: 200, raw: '<html>Welcome to nginx</html>' });
    await expect(events.send(meeting())).rejects.toMatchObject({ status: 200, code: 'invalid_answer', attempts: 1 });
  });

  it('resends the same bytes after a lost answer (the service keeps one event per timestamp and body)', async () => {
    service.script.push('drop');
    const ack = await events.send(meeting());
    expect(ack.status).toBe('accepted');
    expect(service.events).toHaveLength(2);
    expect(service.events[1].rawBody).toBe(service.events[0].rawBody);
    // Each attempt is a request of its own, with an id the service keeps.
    expect(service.events[0].sentRequestId).toMatch(/^req_[0-9a-f]{24}$/);
    expect(service.events[1].sentRequestId).not.toBe(service.events[0].sentRequestId);
  });

  it('gives up after three lost answers with network_error and the id the last request was sent with', async () => {
    service.script.push('drop', 'drop', 'drop');
    const error = (await events.send(meeting()).catch((e: unknown) => e)) as ServiceEventError;
    expect(error).toMatchObject({ status: 0, code: 'network_error', attempts: 3, requestId: service.events[2].sentRequestId });
  });

  it('counts a request that outlasts timeoutMs as lost', async () => {
    const slow = await serve(() => undefined); // never answers
    try {
      events = new ServiceEvents({ serviceUrl: slow.url, clientId: 'cid_abc', clientSecret: 's', signingSecret, timeoutMs: 100 });
      await expect(events.send(meeting())).rejects.toMatchObject({ status: 0, code: 'timeout', attempts: 3 });
    } finally {
      await slow.close();
    }
  });

  it('throws a refused token request as the token endpoint answered it, without posting the event', async () => {
    service.tokenAnswer = {
      status: 401,
      body: {
        type: `${PROBLEMS}invalid_client`,
        title: 'Invalid Client',
        status: 401,
        detail: 'The client credentials are unknown',
        error: 'invalid_client',
        error_description: 'The client credentials are unknown',
      },
    };
    const error = (await events.send(meeting()).catch((e: unknown) => e)) as ServiceEventError;
    expect(error).toMatchObject({ status: 401, code: 'invalid_client', detail: 'The client credentials are unknown', attempts: 1 });
    expect(service.events).toHaveLength(0);
  });

  it('fills in the timestamp (now) and takes a Date', async () => {
    const before = Date.now();
    const { timestamp: _omitted, ...withoutTimestamp } = meeting();
    await events.send(withoutTimestamp);
    await events.send({ ...meeting(), timestamp: new Date('2026-03-04T05:06:07.089Z') });
    const [first, second] = service.events.map((e) => JSON.parse(e.rawBody) as { timestamp: string });
    expect(Date.parse(first.timestamp)).toBeGreaterThanOrEqual(before);
    expect(first.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(second.timestamp).toBe('2026-03-04T05:06:07.089Z');
  });

  it('refuses a malformed signing secret when constructed, naming the mistake', () => {
    const make = (signing: string) => () =>
      new ServiceEvents({ serviceUrl: service.url, clientId: 'c', clientSecret: 's', signingSecret: signing });
    expect(make(`${signingSecret}\n`)).toThrow(WebhookVerificationError);
    expect(make(`${signingSecret}\n`)).toThrow(/whitespace/);
    expect(make('sha256=abc')).toThrow(/signature/);
  });

  it('types send from an `as const` descriptor’s webhook events', async () => {
    const descriptor = {
      capabilities: [
        { type: 'state', name: 'balance', schema: { account: { type: 'string' } } },
        {
          type: 'webhook',
          name: 'meeting_updates',
          schema: { meetingId: { type: 'string' } },
          events: [
            {
              type: 'meeting.updated',
              schema: {
                type: 'object',
                properties: { meetingId: { type: 'string' }, startsAt: { type: 'string' } },
                required: ['meetingId'],
              },
            },
          ],
        },
        { type: 'webhook', name: 'alerts', schema: { level: { type: 'string', enum: ['low', 'high'], required: true } } },
      ],
    } as const;
    const typed = createServiceEvents({ descriptor, serviceUrl: service.url, clientId: 'cid_abc', clientSecret: 's', signingSecret });
    await typed.send({ event: 'meeting.updated', action: 'moved', userId: 'usr_1', data: { meetingId: 'mtg_1' } });
    await typed.send({ event: 'alerts', action: 'raised', userId: 'usr_1', data: { level: 'high' } });
    // @ts-expect-error: an event type the descriptor does not register
    await typed.send({ event: 'balance', action: 'x', userId: 'usr_1', data: {} });
    // @ts-expect-error: the data of `alerts` requires a level of the enum
    await typed.send({ event: 'alerts', action: 'raised', userId: 'usr_1', data: { level: 'urgent' } });
    expect(service.events.map((e) => (JSON.parse(e.rawBody) as { event: string }).event)).toEqual([
      'meeting.updated',
      'alerts',
      'balance',
      'alerts',
    ]);
  });
});
