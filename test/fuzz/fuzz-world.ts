import { createHmac } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import request from 'supertest';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { goodPackageCapabilities, ProviderRuntime } from '../support/provider-runtime';
import { appToken, DEVELOPER_PASSWORD, onboardDeveloper, publishPackage, registerApp, RegisteredApp } from '../support/providers';
import { SmtpSink } from '../support/smtp-sink';
import { login } from '../support/users';
import { WebhookReceiver } from '../support/webhook-receiver';
import type { CredentialKind, FuzzCase, Operation } from './openapi-arbitraries';
import { OMIT, percentEncode, Raw, RefKind, resolve, toJson } from './values';

export interface FuzzResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: unknown;
}

export interface SentRequest {
  method: string;
  target: string;
  headers: Record<string, string>;
  body?: string;
}

const OPERATOR = { authorization: `Bearer ${OPERATOR_TOKEN}` };
const REDIRECT_URI = 'https://acme.example/callback';

/** Raw HTTP, so paths and bodies go out exactly as built (no client-side normalisation, no throwing on lone surrogates). */
function sendRaw(base: URL, sent: SentRequest): Promise<FuzzResponse> {
  return new Promise((resolvePromise, reject) => {
    const headers: Record<string, string> = { ...sent.headers };
    if (sent.body !== undefined) headers['content-length'] = String(Buffer.byteLength(sent.body));
    const req = httpRequest(
      { host: base.hostname, port: base.port, method: sent.method, path: sent.target, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        // A stream that opened (`soul dev`'s session) never ends by itself: its first event is the answer.
        const streaming = res.statusCode === 200 && (res.headers['content-type'] ?? '').startsWith('text/event-stream');
        res.on('data', (chunk: Buffer) => {
          chunks.push(chunk);
          if (streaming && Buffer.concat(chunks).includes('\n\n')) res.destroy();
        });
        res.on('error', reject);
        res.on(streaming ? 'close' : 'end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown = {};
          try {
            body = JSON.parse(text);
          } catch {
            /* not JSON: the envelope check reports it */
          }
          resolvePromise({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
      },
    );
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer within 30 s to ${sent.method} ${sent.target.slice(0, 200)}`)));
    req.on('error', reject);
    if (sent.body !== undefined) req.write(sent.body);
    req.end();
  });
}

/**
 * One running service (api and worker roles) with a real credential of every
 * kind and a real resource behind every kind of id the document's paths take.
 */
export class FuzzWorld {
  url = '';
  private env!: TestEnvironment;
  private smtp!: SmtpSink;
  private idp!: TestIdentityProvider;
  private runtime!: ProviderRuntime;
  private receiver!: WebhookReceiver;
  private app!: RegisteredApp;
  private appScopes: string[] = [];
  private webhookSecret = '';
  private readonly tokens: Record<Exclude<CredentialKind, 'none'>, string> = {
    user: '',
    developer: '',
    app: '',
    operator: OPERATOR_TOKEN,
    logoutUser: '',
    soulUser: '',
    logoutDeveloper: '',
    sessionsUser: '',
    accountUser: '',
  };
  private readonly refs: Partial<Record<RefKind, string>> = {};

  static async start(): Promise<FuzzWorld> {
    const world = new FuzzWorld();
    await world.boot();
    return world;
  }

  private async boot(): Promise<void> {
    this.smtp = await SmtpSink.start();
    this.idp = await TestIdentityProvider.start();
    this.runtime = await ProviderRuntime.start();
    this.receiver = await WebhookReceiver.start();
    this.env = await TestEnvironment.create({
      SMTP_URL: this.smtp.url,
      ...this.idp.env,
      RATE_LIMIT_ENTERPRISE_PER_MINUTE: '10000000',
      RATE_LIMIT_ENTERPRISE_PER_DAY: '100000000',
    });
    ({ url: this.url } = await this.env.startApi());
    await this.env.startWorker();

    const user = await this.loginUser('uid-fuzz', 'fuzz-user@example.com');
    this.tokens.user = user.token;
    this.refs.user = user.id;
    const victim = await this.loginUser('uid-fuzz-victim', 'fuzz-victim@example.com');
    this.refs.victimUser = victim.id;
    this.tokens.logoutUser = (await this.loginUser('uid-fuzz-logout', 'fuzz-logout@example.com')).token;
    this.tokens.soulUser = (await this.loginUser('uid-fuzz-soul', 'fuzz-soul@example.com')).token;
    // Signing out everywhere and deleting the account end the caller's sessions: users of their own, as logout has.
    this.tokens.sessionsUser = (await this.loginUser('uid-fuzz-sessions', 'fuzz-sessions@example.com')).token;
    this.tokens.accountUser = (await this.loginUser('uid-fuzz-account', 'fuzz-account@example.com')).token;
    this.refs.firebaseToken = await this.idp.token({ sub: 'uid-fuzz-login', email: 'fuzz-login@example.com', expiresInSeconds: 86_400 });

    const developer = await onboardDeveloper(this.url, this.smtp, 'fuzz-dev@example.com');
    this.tokens.developer = developer.token;
    const second = await request(this.url)
      .post('/v1/providers/auth/login')
      .send({ email: developer.email, password: DEVELOPER_PASSWORD })
      .expect(200);
    this.tokens.logoutDeveloper = second.body.token;

    this.app = await registerApp(this.url, developer, { webhook_url: this.receiver.url, redirect_uris: [REDIRECT_URI] });
    this.appScopes = (this.app as unknown as { scopes: string[] }).scopes;
    this.refs.app = this.app.id;
    this.refs.clientId = this.app.client_id;
    this.refs.clientSecret = this.app.client_secret;
    this.tokens.app = await appToken(this.url, this.app);
    this.refs.runtimeUrl = this.runtime.url;
    this.refs.webhookUrl = this.receiver.url;
    this.refs.redirectUri = REDIRECT_URI;
    await this.resetWebhookProfile();

    const published = await publishPackage(this.url, this.bearer('app'), {
      appId: this.app.id,
      name: 'Fuzz Bank',
      slug: 'fuzz-bank',
      description: 'Balances, transfers and advisor meetings',
      riskTier: 'action_capable',
      runtimeUrl: this.runtime.url,
      capabilities: goodPackageCapabilities(),
    });
    this.refs.package = published.packageId;
    this.refs.version = published.versionId;
    this.refs.slug = published.slug;
    this.refs.capability = 'balance';
    this.refs.placement = 'home_widgets';

    const userAuth = this.bearer('user');
    this.refs.install = (
      await request(this.url).post('/v1/installs').set(userAuth).send({ package_id: published.packageId }).expect(201)
    ).body.id;
    this.refs.contact = (
      await request(this.url).post('/v1/contacts').set(userAuth).send({ name: 'Fuzz Target', email: 'target@example.com' }).expect(201)
    ).body.id;
    this.refs.group = (
      await request(this.url)
        .post('/v1/groups')
        .set(userAuth)
        .send({ name: 'Fuzz Group', member_ids: [this.refs.contact] })
        .expect(201)
    ).body.id;
    await request(this.url).post('/v1/messages').set(userAuth).send({ recipient_id: this.refs.contact, content: 'hello' }).expect(201);

    // Ids of things that take a worker or a runtime to exist; a made-up id of the right shape when one does not come.
    const pending = await request(this.url)
      .post(`/v1/providers/packages/${published.packageId}/capabilities/transfer/execute`)
      .set(userAuth)
      .send({ input: { toAccount: 'DE89370400440532013000', amount: 25, currency: 'EUR' }, idempotencyKey: 'fuzz-1' });
    this.refs.confirmation = pending.body?.confirmationId ?? 'conf_fuzz000000000000000000';
    const action = await request(this.url)
      .post('/v1/agents/execute')
      .set(userAuth)
      .send({ action: 'suggest_reply', params: { contact_id: this.refs.contact } });
    this.refs.action = action.body?.id ?? 'act_fuzz0000000000000000000';
    const exported = await request(this.url).post('/v1/soul/export').set(userAuth).set('idempotency-key', 'fuzz-export').send({});
    this.refs.export = exported.body?.id ?? 'exp_fuzz0000000000000000000';
    await request(this.url)
      .post(`/v1/providers/apps/${this.app.id}/webhook/test`)
      .set(this.bearer('developer'))
      .send({ type: 'install.created' });
    const deliveries = await request(this.url).get(`/v1/providers/apps/${this.app.id}/webhook/deliveries`).set(this.bearer('developer'));
    this.refs.delivery = firstId(deliveries.body, 'deliveries') ?? 'dlv_fuzz0000000000000000000';
    const runs = await request(this.url).get(`/v1/providers/conformance?version_id=${published.versionId}`).set(this.bearer('app'));
    this.refs.conf = firstId(runs.body, 'runs') ?? 'conf_fuzz000000000000000000';
  }

  private async loginUser(sub: string, email: string) {
    const user = await login(this.url, this.idp, { sub, name: 'Fuzz', email });
    await request(this.url).patch(`/v1/operator/users/${user.id}`).set(OPERATOR).send({ tier: 'enterprise' }).expect(200);
    return user;
  }

  private bearer(kind: Exclude<CredentialKind, 'none'>): { authorization: string } {
    return { authorization: `Bearer ${this.tokens[kind]}` };
  }

  private async resetWebhookProfile(): Promise<void> {
    const put = await request(this.url)
      .put(`/v1/providers/apps/${this.app.id}/webhook`)
      .set(this.bearer('developer'))
      .send({ url: this.receiver.url, event_types: ['*'], enabled: true });
    if (typeof put.body?.secret === 'string') this.webhookSecret = put.body.secret;
    else {
      const rotated = await request(this.url)
        .post(`/v1/providers/apps/${this.app.id}/webhook/secret`)
        .set(this.bearer('developer'))
        .expect(200);
      this.webhookSecret = rotated.body.secret;
    }
  }

  ref(kind: RefKind): string {
    if (kind === 'now') return new Date().toISOString();
    const value = this.refs[kind];
    if (value === undefined) throw new Error(`the fuzz world has no ${kind}`);
    return value;
  }

  /** The credential a route is for: the document's security plus the route map (conventions) decide whose token. */
  credentialFor(operation: Operation): CredentialKind {
    if (operation.key === 'POST /v1/auth/logout') return 'logoutUser';
    if (operation.key === 'POST /v1/providers/auth/logout') return 'logoutDeveloper';
    if (operation.key === 'DELETE /v1/soul') return 'soulUser';
    if (operation.key === 'POST /v1/sessions/revoke-all') return 'sessionsUser';
    if (operation.key === 'DELETE /v1/me') return 'accountUser';
    if (!operation.secured) return 'none';
    const path = operation.path;
    if (path.startsWith('/v1/operator')) return 'operator';
    if (/^\/v1\/providers\/packages\/\{[^}]+\}\/capabilities\//.test(path)) return 'user';
    if (/^\/v1\/providers\/(packages|conformance|runtime\/webhook)/.test(path)) return 'app';
    if (path.startsWith('/v1/providers')) return 'developer';
    return 'user';
  }

  /** Builds the HTTP request a generated case stands for. */
  build(operation: Operation, fuzzCase: FuzzCase): SentRequest {
    let target = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => this.encode(fuzzCase.path[name]));
    const query = fuzzCase.query.flatMap(([name, value]) =>
      (Array.isArray(value) ? value : [value]).map((v) => `${percentEncode(name)}=${this.encode(v)}`),
    );
    if (query.length > 0) target += `?${query.join('&')}`;
    const headers: Record<string, string> = {};
    const credential = fuzzCase.credential === 'own' ? this.credentialFor(operation) : fuzzCase.credential;
    if (credential === 'garbage') headers.authorization = 'Bearer not-a-token';
    else if (credential !== 'none') headers.authorization = `Bearer ${this.tokens[credential]}`;
    for (const [name, value] of Object.entries(fuzzCase.headers)) {
      if (value === OMIT) continue;
      headers[name] = String(resolve(value, this));
    }
    let body: string | undefined;
    if (fuzzCase.body instanceof Raw) body = fuzzCase.body.text;
    else if (fuzzCase.body !== OMIT) body = toJson(fuzzCase.body, this);
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (operation.key === 'POST /v1/providers/runtime/webhook') {
      const signed = `sha256=${createHmac('sha256', this.webhookSecret)
        .update(body ?? '')
        .digest('hex')}`;
      if (fuzzCase.signature === 'valid') headers['x-signature-256'] = signed;
      else if (fuzzCase.signature === 'wrong') headers['x-signature-256'] = `sha256=${'0'.repeat(64)}`;
      else if (fuzzCase.signature === 'malformed') headers['x-signature-256'] = signed.slice(7);
    }
    return { method: operation.method, target, headers, body };
  }

  private encode(value: unknown): string {
    if (value instanceof Raw) return value.text;
    const resolved = resolve(value, this);
    return percentEncode(typeof resolved === 'string' ? resolved : (JSON.stringify(resolved) ?? ''));
  }

  send(sent: SentRequest): Promise<FuzzResponse> {
    return sendRaw(new URL(this.url), sent);
  }

  /**
   * Puts back what a valid fuzzed request may have changed, so the next
   * operation still starts from working credentials and resources: the
   * package reinstated, the tier, the app's scopes and URLs, the app token
   * and webhook secret (rotations), the user's and developer's sessions.
   */
  async repair(operation: Operation): Promise<void> {
    const url = this.url;
    if (operation.path.startsWith('/v1/operator')) {
      await request(url).post(`/v1/operator/packages/${this.refs.package}/reinstate`).set(OPERATOR);
      await request(url).patch(`/v1/operator/users/${this.refs.user}`).set(OPERATOR).send({ tier: 'enterprise' });
    }
    if ((await request(url).get('/v1/me').set(this.bearer('user'))).status === 401) {
      this.tokens.user = (await login(url, this.idp, { sub: 'uid-fuzz', name: 'Fuzz', email: 'fuzz-user@example.com' })).token;
    }
    if ((await request(url).get('/v1/providers/account').set(this.bearer('developer'))).status === 401) {
      const again = await request(url)
        .post('/v1/providers/auth/login')
        .send({ email: 'fuzz-dev@example.com', password: DEVELOPER_PASSWORD });
      if (again.status === 200) this.tokens.developer = again.body.token;
    }
    const developer = this.bearer('developer');
    const touchesApp = /^\/v1\/providers\/(runtime\/)?apps\//.test(operation.path);
    if (touchesApp) {
      await request(url)
        .patch(`/v1/providers/apps/${this.app.id}`)
        .set(developer)
        .send({ scopes: this.appScopes, redirect_uris: [REDIRECT_URI], webhook_url: this.receiver.url });
    }
    const probe = await request(url).get(`/v1/providers/packages/${this.refs.package}`).set(this.bearer('app'));
    if (probe.status === 401 || probe.status === 403) {
      const rotated = await request(url).post(`/v1/providers/apps/${this.app.id}/secret`).set(developer).send({});
      if (rotated.status === 200) {
        this.app = { ...this.app, client_secret: rotated.body.client_secret };
        this.refs.clientSecret = rotated.body.client_secret;
        this.tokens.app = await appToken(url, this.app);
      }
    }
    if (touchesApp) await this.resetWebhookProfile();
  }

  async close(): Promise<void> {
    await this.env?.close();
    await this.receiver?.close();
    await this.runtime?.close();
    await this.idp?.close();
    await this.smtp?.close();
  }
}

function firstId(body: unknown, listName: string): string | undefined {
  const list = (body as Record<string, unknown> | undefined)?.[listName] ?? body;
  if (!Array.isArray(list)) return undefined;
  const first = list[0] as { id?: unknown } | undefined;
  return typeof first?.id === 'string' ? first.id : undefined;
}
