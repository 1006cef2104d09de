import { join } from 'node:path';
import request from 'supertest';
import { PROBLEM_TYPES } from '../../src/common/errors/problem-error';
import { PROVIDER_PAGES } from '../../src/modules/developer-docs/docs-pages';
import { DocShell, fencedBlocks } from '../support/doc-shell';
import { bundleSoulCli } from '../support/soul-cli';
import { OPERATOR_TOKEN, TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { ProviderRuntime } from '../support/provider-runtime';
import { SmtpSink, verificationToken } from '../support/smtp-sink';

const QUICKSTART = join(__dirname, '../../docs/quickstart.md');

type Json = Record<string, unknown>;

/** The operation of the OpenAPI document a concrete path and method match, with its path template. */
function operationFor(document: Json, method: string, path: string): { template: string; operation: Json } | undefined {
  for (const [template, item] of Object.entries(document.paths as Record<string, Json>)) {
    const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    const operation = item[method.toLowerCase()] as Json | undefined;
    if (pattern.test(path) && operation) return { template, operation };
  }
  return undefined;
}

/** A schema with its `$ref` followed (one level is all the request bodies use). */
function resolve(document: Json, schema: Json | undefined): Json | undefined {
  const ref = schema?.$ref as string | undefined;
  if (!ref) return schema;
  return ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<Json>((at, key) => at[key] as Json, document);
}

describe('developer docs served by the service', () => {
  let env: TestEnvironment;
  let smtp: SmtpSink;
  let idp: TestIdentityProvider;
  let runtime: ProviderRuntime;
  let url: string;
  let docsUrl: string;
  let shell: DocShell;

  beforeAll(async () => {
    smtp = await SmtpSink.start();
    idp = await TestIdentityProvider.start();
    runtime = await ProviderRuntime.start();
    env = await TestEnvironment.create({ SMTP_URL: smtp.url, ...idp.env });
    // The harness pins DOCS_URL for the other files; here the default (the service's own docs) is under test.
    delete env.env.DOCS_URL;
    docsUrl = env.config().docsUrl;
    ({ url } = await env.startApi());
    await env.startWorker();
  });
  afterAll(async () => {
    await env.close();
    await runtime.close();
    await idp.close();
    await smtp.close();
  });

  describe('pages', () => {
    it('serves the index with every provider page, and each page with a strict policy', async () => {
      const index = await request(url).get('/developers').expect(200);
      expect(index.headers['content-type']).toBe('text/html; charset=utf-8');
      for (const page of PROVIDER_PAGES) expect(index.text).toContain(`href="/developers/${page.slug}"`);
      expect(index.text).not.toMatch(/href="\/developers\/(decisions|performance|testing|security)"/);
      for (const page of PROVIDER_PAGES) {
        const res = await request(url).get(`/developers/${page.slug}`).expect(200);
        expect(res.headers['content-security-policy']).toContain("script-src 'self'");
        expect(res.headers['content-security-policy']).toContain("default-src 'self'");
        expect(res.headers['x-content-type-options']).toBe('nosniff');
        expect(res.text).toContain('<html lang="en">');
        expect(res.text).not.toMatch(/<script/i);
      }
      await request(url).get('/developers/').expect(301).expect('location', '/developers');
      await request(url).get('/developers/schemas/package.json').expect(301).expect('location', '/v1/providers/descriptor.schema.json');
      const css = await request(url).get('/developers/docs.css').expect(200);
      expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    });

    it('keeps Swagger UI at /docs and the OpenAPI document at /docs/openapi.json, without the docs routes', async () => {
      await request(url)
        .get('/docs')
        .expect((res) => expect([200, 301, 302]).toContain(res.status));
      const document = (await request(url).get('/docs/openapi.json').expect(200)).body as Json;
      expect(Object.keys(document.paths as Json).filter((p) => p.startsWith('/developers'))).toEqual([]);
    });

    it('answers 404 for an unknown page and for paths that try to leave the docs', async () => {
      for (const path of [
        '/developers/nope',
        '/developers/decisions',
        '/developers/performance',
        '/developers/quickstart.md',
        '/developers/..%2f..%2fpackage.json',
        '/developers/..%2F..%2Fsrc%2Fmain.ts',
        '/developers/%2e%2e%2fpackage.json',
        '/developers/constructor',
        '/developers/__proto__',
      ]) {
        const res = await request(url).get(path);
        expect({ path, status: res.status }).toEqual({ path, status: 404 });
        expect(res.text).not.toContain('"name": "soul-service"');
      }
      // Pictures of docs/img are served by name, with a policy that lets an SVG run nothing; the page links them.
      const picture = await request(url).get('/developers/img/placements.svg').buffer(true).expect(200);
      expect(picture.headers['content-type']).toBe('image/svg+xml; charset=utf-8');
      expect(picture.headers['content-security-policy']).toBe("default-src 'none'; style-src 'unsafe-inline'");
      expect(String(picture.body)).toContain('<title id="title">Where each placement appears');
      const components = (await request(url).get('/developers/components').expect(200)).text;
      expect(components).toMatch(/<img src="\/developers\/img\/placements\.svg" alt="Where each placement appears[^"]*">/);
      await request(url).get('/developers/img/no-such.svg').expect(404);
      await request(url).get('/developers/img/..%2fquickstart.md').expect(404);
      const traversal = await request(url).get('/developers/../package.json');
      expect(traversal.text).not.toContain('"name": "soul-service"');
    });
  });

  describe('quickstart, run as written', () => {
    it('takes a new developer from sign-up to a package a user has installed', async () => {
      const blocks = fencedBlocks(QUICKSTART);
      const files = Object.fromEntries(
        blocks.filter((b) => b.lang === 'json' && b.info.startsWith('file=')).map((b) => [b.info.slice('file='.length), b.body]),
      );
      expect(Object.keys(files)).toEqual(['soul-package.json']);
      shell = new DocShell(
        {
          BASE_URL: () => url,
          RUNTIME_URL: () => runtime.url,
          VERIFY_TOKEN: async () => verificationToken(await smtp.mailTo('dev@acme.example')),
        },
        files,
        bundleSoulCli('soul-cli-docs-e2e'),
      );
      shell.vars.set('OPERATOR_TOKEN', OPERATOR_TOKEN);
      shell.vars.set('FIREBASE_ID_TOKEN', await idp.token({ sub: 'uid-quickstart', name: 'Quinn', email: 'quinn@example.com' }));
      const sh = blocks.filter((b) => b.lang === 'sh');
      expect(sh.length).toBeGreaterThan(10);
      for (const block of sh) await shell.run(block);

      // Where the page leaves the reader: the package is published and the user has it installed.
      const packageId = shell.vars.get('PACKAGE_ID')!;
      const pkg = await request(url)
        .get(`/v1/providers/packages/${packageId}`)
        .set('authorization', `Bearer ${shell.vars.get('APP_TOKEN')}`);
      expect(pkg.body.versions[0]).toMatchObject({ state: 'published' });
      const installs = await request(url)
        .get('/v1/installs')
        .set('authorization', `Bearer ${shell.vars.get('USER_TOKEN')}`)
        .expect(200);
      expect(installs.body.installs).toEqual([expect.objectContaining({ package_id: packageId, status: 'active' })]);
      const conformance = shell.sent.filter((s) => s.path.startsWith('/v1/providers/conformance/')).pop();
      expect(JSON.parse(conformance!.answer)).toMatchObject({ status: 'completed', passed: true });
    });

    it('uses only operations, methods and body fields that the OpenAPI document has', async () => {
      expect(shell.sent.length).toBeGreaterThan(10);
      const document = (await request(url).get('/docs/openapi.json').expect(200)).body as Json;
      for (const sent of shell.sent) {
        const found = operationFor(document, sent.method, sent.path);
        expect({ request: `${sent.method} ${sent.path}`, documented: found !== undefined }).toEqual({
          request: `${sent.method} ${sent.path}`,
          documented: true,
        });
        if (!sent.body || typeof sent.body !== 'object') continue;
        const content = ((found!.operation.requestBody as Json | undefined)?.content ?? {}) as Record<string, { schema?: Json }>;
        const schema = resolve(document, Object.values(content)[0]?.schema);
        const properties = Object.keys((schema?.properties as Json | undefined) ?? {});
        expect({ operation: found!.template, fields: Object.keys(sent.body).filter((f) => !properties.includes(f)) }).toEqual({
          operation: found!.template,
          fields: [],
        });
      }
    });
  });

  describe('problem type URIs', () => {
    it('defaults DOCS_URL to the service itself', () => {
      expect(docsUrl).toBe(env.config().publicBaseUrl);
    });

    it('has an entry for every problem type on the served errors page', async () => {
      const page = (await request(url).get('/developers/errors').expect(200)).text;
      for (const code of Object.keys(PROBLEM_TYPES)) expect(page).toContain(`<h3 id="${code}"`);
    });

    it('resolves every type URI the API answers with to its entry', async () => {
      const app = { authorization: `Bearer ${shell.vars.get('APP_TOKEN')}` };
      const basic = `Basic ${Buffer.from(`${shell.vars.get('CLIENT_ID')}:wrong`).toString('base64')}`;
      const answers = await Promise.all([
        request(url).get('/v1/providers/apps'),
        request(url).get('/v1/providers/apps').set('authorization', 'Bearer not-a-token'),
        request(url).post('/v1/auth/token').set('authorization', basic).type('form').send({ grant_type: 'client_credentials' }),
        request(url).post('/v1/auth/token').type('form').send({ grant_type: 'password' }),
        request(url).post('/v1/providers/auth/login').send({ email: 'dev@acme.example', password: 'not the password at all' }),
        request(url).get('/v1/providers/packages/pkg_doesnotexist').set(app),
        request(url).post('/v1/providers/packages').set(app).send({ name: 'x' }),
        request(url).post('/v1/providers/account/verify').send({ token: 'unknown-token-value' }),
        request(url)
          .post(`/v1/providers/packages/manage/${shell.vars.get('PACKAGE_ID')}/versions/${shell.vars.get('VERSION_ID')}/submit`)
          .set(app),
        request(url).post('/v1/providers/runtime/webhook').set(app).send({ type: 'x' }),
      ]);
      const types = new Set(answers.filter((a) => a.status >= 400).map((a) => a.body.type as string));
      expect(types.size).toBeGreaterThanOrEqual(6);
      for (const type of types) {
        expect(type.startsWith(`${docsUrl}/developers/errors#`)).toBe(true);
        const target = new URL(type);
        const code = decodeURIComponent(target.hash.slice(1));
        expect(Object.keys(PROBLEM_TYPES)).toContain(code);
        // The same path on the test listener (PUBLIC_BASE_URL names the default port, not the test's).
        const page = await request(url).get(target.pathname).expect(200);
        expect({ type, anchored: page.text.includes(`id="${code}"`) }).toEqual({ type, anchored: true });
      }
    });
  });
});
