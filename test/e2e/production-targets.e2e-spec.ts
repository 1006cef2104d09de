import request from 'supertest';
import { TestEnvironment } from '../support/harness';
import { goodPackageCapabilities } from '../support/provider-runtime';
import { appToken, onboardDeveloper, OnboardedDeveloper, registerApp } from '../support/providers';
import { PUBLIC_ADDRESS, ScriptedDns } from '../support/scripted-dns';
import { SmtpSink } from '../support/smtp-sink';
import { waitFor } from '../support/wait-for';

const dns = new ScriptedDns();
const ScriptedDnsModule = dns.module();
const problem = (code: string) => expect.stringMatching(new RegExp(`#${code}$`));

interface Attempt {
  attempt: number;
  error_class: string | null;
  outcome: string;
  status_code: number | null;
}

/**
 * The outbound address rules as production runs them: the api and the worker
 * both with ALLOW_PRIVATE_TARGETS=false (every other e2e file allows private
 * targets to reach its local peers). Names resolve through a scripted
 * resolver; a name it was not told about does not resolve.
 */
describe('outbound targets with ALLOW_PRIVATE_TARGETS=false (production rules)', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let url: string;
  let developer: OnboardedDeveloper;

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ALLOW_PRIVATE_TARGETS: 'false', WEBHOOK_RETRY_BASE_MS: '1' });
    url = (await env.startApi({ imports: [ScriptedDnsModule] })).url;
    await env.startWorker({ imports: [ScriptedDnsModule], env: { RUNTIME_TICK_MS: '3600000' } });
    developer = await onboardDeveloper(url, smtp, 'production-targets@example.com');
  }, 60_000);

  afterAll(async () => {
    await env?.close();
    await smtp?.close();
  });

  async function appWithWebhook(webhookUrl: string) {
    const app = await registerApp(url, developer, { name: 'Production', webhook_url: webhookUrl });
    expect(app.webhook_secret).toMatch(/^whsec_/);
    return { app, auth: { authorization: `Bearer ${await appToken(url, app)}` } };
  }

  async function settledTest(appId: string, auth: Record<string, string>) {
    const sent = await request(url)
      .post(`/v1/providers/apps/${appId}/webhook/test`)
      .set(auth)
      .send({ type: 'install.created' })
      .expect(202);
    return waitFor(
      async () => {
        const res = await request(url).get(`/v1/providers/apps/${appId}/webhook/deliveries/${sent.body.id}`).set(auth).expect(200);
        return res.body.status === 'pending' ? undefined : (res.body as { status: string; last_error: string; attempts: Attempt[] });
      },
      { what: 'the test delivery to settle', timeoutMs: 20_000, intervalMs: 50 },
    );
  }

  describe('at registration', () => {
    dns.answer('inside.acme.example', '10.0.0.7');
    dns.answer('metadata.acme.example', '169.254.169.254');

    it.each([
      'https://10.0.0.5/hooks',
      'https://127.0.0.1/hooks',
      'https://[::1]/hooks',
      'https://[::ffff:10.0.0.5]/hooks',
      'https://localhost/hooks',
      'https://hooks.internal/in',
      'https://169.254.169.254/latest',
      'https://inside.acme.example/hooks',
      'https://metadata.acme.example/hooks',
    ])('refuses %s as webhook_url when an app is registered, updated or its webhook is set', async (target) => {
      const created = await request(url)
        .post('/v1/providers/apps')
        .set(developer.auth)
        .send({ name: 'Inside', webhook_url: target })
        .expect(400);
      expect(created.body).toMatchObject({ type: problem('invalid_format'), field: 'webhook_url' });

      const app = await registerApp(url, developer, { name: 'Outside', webhook_url: undefined });
      const auth = { authorization: `Bearer ${await appToken(url, app)}` };
      const patched = await request(url).patch(`/v1/providers/runtime/apps/${app.id}`).set(auth).send({ webhook_url: target }).expect(400);
      expect(patched.body).toMatchObject({ type: problem('invalid_format'), field: 'webhook_url' });
      const put = await request(url).put(`/v1/providers/apps/${app.id}/webhook`).set(auth).send({ url: target }).expect(400);
      expect(put.body).toMatchObject({ type: problem('invalid_format'), field: 'webhook_url' });
      // Nothing was set up: no profile, no URL.
      await request(url).get(`/v1/providers/apps/${app.id}/webhook`).set(auth).expect(404);
      expect((await request(url).get(`/v1/providers/apps/${app.id}`).set(auth).expect(200)).body.webhook_url).toBeNull();
    });

    it('refuses a package runtimeUrl whose name resolves inside', async () => {
      const app = await registerApp(url, developer, { name: 'Runtime inside', webhook_url: undefined });
      const auth = { authorization: `Bearer ${await appToken(url, app)}` };
      const res = await request(url)
        .post('/v1/providers/packages')
        .set(auth)
        .send({
          appId: app.id,
          name: 'Inside',
          slug: 'inside-runtime',
          description: 'x',
          riskTier: 'data_only',
          runtimeUrl: 'https://inside.acme.example',
          capabilities: (goodPackageCapabilities() as Array<{ type: string }>).filter((c) => c.type !== 'action'),
        })
        .expect(400);
      expect(res.body).toMatchObject({ type: problem('invalid_format'), field: 'runtimeUrl' });
    });

    it('accepts a public name, and a name that does not resolve yet (nothing to judge until it does)', async () => {
      dns.answer('hooks.public.example', PUBLIC_ADDRESS);
      await appWithWebhook('https://hooks.public.example/in');
      await appWithWebhook('https://hooks.not-yet.invalid/in');
    });
  });

  describe('at delivery', () => {
    it('retries a delivery to a name that does not resolve: every attempt is logged as a retryable dns_error', async () => {
      const { app, auth } = await appWithWebhook('https://hooks.nowhere.invalid/in');
      const done = await settledTest(app.id, auth);
      // 1 attempt and 5 retries (spec), all of them made: a DNS failure is not a blocked target.
      expect(done.attempts).toHaveLength(6);
      expect(done.attempts.map((a) => a.error_class)).toEqual(Array(6).fill('dns_error'));
      expect(done.attempts.slice(0, 5).map((a) => a.outcome)).toEqual(Array(5).fill('retry'));
      expect(done.attempts.every((a) => a.status_code === null)).toBe(true);
      expect(done).toMatchObject({ status: 'failed', last_error: 'dns_error' });
      expect(dns.asked.filter((host) => host === 'hooks.nowhere.invalid').length).toBeGreaterThanOrEqual(6);
    });

    it('blocks, without retrying, a delivery to a name that now resolves to a forbidden address', async () => {
      dns.answer('hooks.rebind.example', PUBLIC_ADDRESS);
      const { app, auth } = await appWithWebhook('https://hooks.rebind.example/in');
      dns.answer('hooks.rebind.example', '10.0.0.7');
      const done = await settledTest(app.id, auth);
      expect(done).toMatchObject({ status: 'failed', last_error: 'blocked_target' });
      expect(done.attempts.length).toBeLessThanOrEqual(1);
      expect(done.attempts.every((a) => a.error_class === 'blocked_target' && a.outcome === 'failed')).toBe(true);
    });
  });
});
