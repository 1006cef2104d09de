import { ChildProcess, execFile, spawn } from 'node:child_process';
import { isDeepStrictEqual } from 'node:util';
import { join } from 'node:path';
import request from 'supertest';
import { Client } from 'pg';
import { CONTACTS_COUNT_SQL, CONTACTS_PAGE_SQL, FIND_RECIPIENT_SQL } from '../src/modules/contacts/contacts.repository';
import { SEND_TO_CONTACT_SQL, THREAD_SQL } from '../src/modules/messages/messages.repository';
import { DURABLE_COPY_DELAY_MS, MESSAGE_CREATED } from '../src/modules/messages/message-created';
import { SEND_SCOPE } from '../src/modules/messages/messages.service';
import { dataSourceOptions } from '../src/infra/database/data-source-options';
import { SpawnedRole, TestEnvironment } from '../test/support/harness';
import { TestIdentityProvider } from '../test/support/identity-provider';
import { login } from '../test/support/users';
import { profileFile, spawnApi, stopGracefully } from './support/roles';
import { load, LoadResult } from './support/load';
import { measureCpu, processGroups, ProcessGroup } from './support/process-cpu';
import { formatProfile, summariseProfile, writeSummary } from './support/profile';
import { ratio, writeResult } from './support/results';

/**
 * HTTP through the full stack against a bare Fastify baseline doing the same
 * database work, each server in its own operating-system process:
 *
 * - the service as operators run it: `dist/main.js` as the api role
 *   (`APP_ROLE=api`, `LOG_LEVEL=warn`, rate limits raised far above what the
 *   load reaches), with JWT verification, the session check, the rate limiter,
 *   validation and its own SQL on PostgreSQL;
 * - the baseline: `bench/support/bare-server.js`, a bare Fastify server
 *   (`logger: false`) with a `pg` Pool of the service's size on the same
 *   database. `GET /v1/me` and `GET /health/live` answer the service's own
 *   answer as a fixed body (bare Fastify); `GET /v1/contacts`,
 *   `GET /v1/messages?with=…` and `POST /v1/messages` run the service's SQL
 *   for the same user (built below from the service's SQL fragments: the
 *   contact page and count; the recipient lookup and the thread page; the
 *   one-statement send to a contact with its Idempotency-Key row, message,
 *   recipient row, interaction weight and outbox event) and answer the same
 *   JSON (bare Fastify + pg). Before measuring, the bench checks that the two
 *   answer the same bodies and write the same rows, and fails loudly if not.
 *
 * autocannon runs in a child process too (bench/support/autocannon-child.js),
 * so the load generator never shares an event loop with either server. Each
 * baseline row runs right before its service row, so drift in the machine's
 * load hits both alike. POST rows give every request a fresh Idempotency-Key
 * and send to the user's 20 contacts in turn.
 *   npm run bench:http            (BENCH_DURATION seconds per row, default 5)
 *   BENCH_PROFILE=1 npm run bench:http   also CPU-profiles the service process over the whole run
 * Needs `npm run build` first (`npm run bench` does it).
 */
const DURATION = Number(process.env.BENCH_DURATION ?? 5);
/** The latency-against-load curve of GET /v1/me (the plot in docs/performance.md). */
const CURVE_LEVELS = (process.env.BENCH_HTTP_LEVELS ?? '1,10,25,50,100,200').split(',').map(Number);
/** The database reads, measured at these levels. */
const READ_LEVELS = [50, 200];
const PROFILE = process.env.BENCH_PROFILE === '1';
const PROFILE_NAME = 'http-service';
/** The service's pool size (src/infra/database/data-source-options.ts), given to the baseline's pool. */
const POOL_SIZE = (dataSourceOptions('postgres://localhost/x').extra as { max: number }).max;
const CONTACTS = 20;
const HISTORY_MESSAGES = 50;
const LIMIT = 20;

/**
 * The service's SQL for the measured routes, from the same fragments its repositories use
 * (ContactsRepository.page/countForUser/findRecipient, MessagesRepository.thread/sendToContact).
 */
const SQL = {
  contactsPage: CONTACTS_PAGE_SQL,
  contactsCount: CONTACTS_COUNT_SQL,
  findRecipient: FIND_RECIPIENT_SQL,
  thread: THREAD_SQL,
  sendToContact: SEND_TO_CONTACT_SQL,
};

interface Row {
  target: string;
  server: 'bare' | 'service';
  method: 'GET' | 'POST';
  path: string;
  connections: number;
  requestsPerSecond: number;
  p50Ms: number;
  p90Ms: number;
  p99Ms: number;
  maxMs: number;
  non2xx: number;
  errors: number;
  ratio: number;
  /**
   * CPU microseconds per request over the row (user + system): the server's process, the PostgreSQL backends of
   * the bench database, Redis, and the load generator. Where the machine's two cores went, per request.
   */
  cpuUs: { server: number; postgres: number; redis: number; loadGenerator: number };
}

/** autocannon (bench/support/autocannon-child.js) with a method, bodies sent in turn and a fresh Idempotency-Key per request. */
function loadPost(url: string, connections: number, durationSeconds: number, headers: Record<string, string>, bodies: string[]) {
  const options = {
    url,
    connections,
    duration: durationSeconds,
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    bodies,
    idempotencyKeys: true,
  };
  return new Promise<LoadResult>((resolve, reject) => {
    execFile(
      process.execPath,
      [join(__dirname, 'support', 'autocannon-child.js'), JSON.stringify(options)],
      { maxBuffer: 1 << 20, timeout: (durationSeconds + 60) * 1000 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`load generator failed: ${error.message}\n${stderr}`));
        resolve(JSON.parse(stdout) as LoadResult);
      },
    );
  });
}

/** Starts bench/support/bare-server.js and waits for the port it prints. */
async function startBareServer(config: object): Promise<{ child: ChildProcess; url: string; output: () => string }> {
  const child = spawn(process.execPath, [join(__dirname, 'support', 'bare-server.js'), JSON.stringify(config)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`bare server did not start in 20 s:\n${err}`)), 20_000);
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = /^\{.*\}$/m.exec(out);
      if (line) {
        clearTimeout(timer);
        resolve((JSON.parse(line[0]) as { port: number }).port);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`bare server exited (${code}) before listening:\n${err}`));
    });
  });
  return { child, url: `http://127.0.0.1:${port}`, output: () => err };
}

/** Rows of the tables a send writes, to check that the baseline's send writes what the service's does. */
async function writtenRows(databaseUrl: string): Promise<Record<string, number>> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<Record<string, number>>(
      `SELECT (SELECT count(*)::int FROM messages) AS messages, (SELECT count(*)::int FROM message_recipients) AS message_recipients,
              (SELECT count(*)::int FROM idempotency_keys) AS idempotency_keys, (SELECT count(*)::int FROM events) AS events,
              (SELECT sum(interaction_weight)::float8 FROM contacts) AS interaction_weight`,
    );
    return rows[0];
  } finally {
    await client.end();
  }
}

const fieldNames = (body: unknown): string =>
  JSON.stringify(body, (_key, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .map((k) => [k, 0]),
        )
      : 0,
  );

it('measures authenticated user API reads and sends against bare Fastify baselines, each in its own process', async () => {
  const idp = await TestIdentityProvider.start();
  // Limits far above what the load can reach: this measures the stack, not the limiter's refusals.
  const env = await TestEnvironment.create({
    ...idp.env,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_ENTERPRISE_PER_MINUTE: '10000000',
    RATE_LIMIT_ENTERPRISE_PER_DAY: '1000000000',
  });
  let service: SpawnedRole | undefined;
  let bare: Awaited<ReturnType<typeof startBareServer>> | undefined;
  try {
    const spawned = await spawnApi(env, 'the service', { enabled: PROFILE, name: PROFILE_NAME });
    service = spawned.role;
    const url = spawned.url;

    const user = await login(url, idp, { sub: 'uid-bench-http', name: 'Bench', email: 'bench@example.com' });
    await request(url)
      .patch(`/v1/operator/users/${user.id}`)
      .set('authorization', 'Bearer operator-token-for-tests-only')
      .send({ tier: 'enterprise' })
      .expect(200);
    const contactIds: string[] = [];
    for (let i = 0; i < CONTACTS; i += 1)
      contactIds.push(
        (
          (
            await request(url)
              .post('/v1/contacts')
              .set(user.auth)
              .send({ name: `Contact ${i}` })
              .expect(201)
          ).body as { id: string }
        ).id,
      );
    const partner = contactIds[0];
    for (let i = 0; i < HISTORY_MESSAGES; i += 1)
      await request(url)
        .post('/v1/messages')
        .set(user.auth)
        .send({ recipient_id: partner, content: `History ${i}`, type: 'text' })
        .expect(201);

    const me = (await request(url).get('/v1/me').set(user.auth).expect(200)).body as unknown;
    const live = (await request(url).get('/health/live').expect(200)).body as unknown;
    bare = await startBareServer({
      databaseUrl: env.env.DATABASE_URL,
      poolSize: POOL_SIZE,
      userId: user.id,
      me,
      live,
      sendScope: SEND_SCOPE,
      eventType: MESSAGE_CREATED,
      eventDelayMs: DURABLE_COPY_DELAY_MS,
      defaultLimit: LIMIT,
      sql: SQL,
    });
    const baseUrl = bare.url;

    // The baseline must answer what the service answers, and a send must write the same rows.
    const contactsPath = `/v1/contacts?limit=${LIMIT}`;
    const historyPath = `/v1/messages?with=${partner}&limit=${LIMIT}`;
    for (const path of [contactsPath, historyPath]) {
      const fromService = (await request(url).get(path).set(user.auth).expect(200)).body as { next_cursor?: unknown };
      const fromBare = (await request(baseUrl).get(path).expect(200)).body as unknown;
      if (!isDeepStrictEqual(fromService, fromBare))
        throw new Error(
          `the baseline's GET ${path} differs from the service's:\nservice ${JSON.stringify(fromService)}\nbare ${JSON.stringify(fromBare)}`,
        );
      if (path === historyPath && typeof fromService.next_cursor !== 'string')
        throw new Error(`GET ${path}: expected a full page with a next_cursor (${HISTORY_MESSAGES} messages seeded)`);
    }
    const sends: Record<string, { body: unknown; written: Record<string, number> }> = {};
    for (const [name, base, headers] of [
      ['service', url, user.auth],
      ['bare', baseUrl, {}],
    ] as const) {
      const before = await writtenRows(env.env.DATABASE_URL);
      const res = await request(base)
        .post('/v1/messages')
        .set({ ...headers, 'idempotency-key': `bench-check-${name}` })
        .send({ recipient_id: contactIds[1], content: 'check', type: 'text' })
        .expect(201);
      const after = await writtenRows(env.env.DATABASE_URL);
      sends[name] = {
        body: res.body,
        written: Object.fromEntries(Object.entries(after).map(([k, v]) => [k, Number((v - before[k]).toFixed(6))])),
      };
    }
    if (fieldNames(sends.service.body) !== fieldNames(sends.bare.body) || !isDeepStrictEqual(sends.service.written, sends.bare.written))
      throw new Error(`the baseline's POST /v1/messages differs from the service's: ${JSON.stringify(sends)}`);
    const sendBodies = contactIds.map((id, i) => JSON.stringify({ recipient_id: id, content: `Bench message ${i}`, type: 'text' }));

    const rows: Row[] = [];
    const warmed = new Set<string>();
    // The processes each server's rows account CPU to: the server itself, the database's backends and Redis.
    const cpuGroups = async (pid: number | undefined): Promise<ProcessGroup[]> =>
      (await processGroups(env, [{ name: 'server', pid }])).filter((g) => !g.name.startsWith('bench clients'));
    const groups = { bare: await cpuGroups(bare.child.pid), service: await cpuGroups(service.child.pid) };
    const measure = async (method: Row['method'], shownPath: string, realPath: string, connections: number, withDatabase: boolean) => {
      const auth = realPath === '/health/live' ? {} : user.auth;
      const run = (base: string, headers: Record<string, string>, seconds: number) =>
        method === 'POST'
          ? loadPost(`${base}${realPath}`, connections, seconds, headers, sendBodies)
          : load(`${base}${realPath}`, connections, seconds, headers);
      const measured = async (server: Row['server'], base: string, headers: Record<string, string>) => {
        const { result, shares } = await measureCpu(
          groups[server],
          () => run(base, headers, DURATION),
          (r) => r.total,
        );
        const us = (name: string) => Math.round((shares.find((s) => s.name.startsWith(name))?.msPerUnit ?? 0) * 1000);
        const loadGenerator = Math.round((result.cpuMs * 1000) / Math.max(1, result.total));
        return toRow(server, result, { server: us('server'), postgres: us('PostgreSQL'), redis: us('Redis'), loadGenerator });
      };
      if (!warmed.has(`${method} ${realPath}`)) {
        // Warm both servers up on this route at 50 connections (JIT, pools, prepared statements); not recorded.
        const seconds = warmed.size === 0 ? 2 : 1;
        warmed.add(`${method} ${realPath}`);
        const warm = (base: string, headers: Record<string, string>) =>
          method === 'POST'
            ? loadPost(`${base}${realPath}`, 50, seconds, headers, sendBodies)
            : load(`${base}${realPath}`, 50, seconds, headers);
        await warm(baseUrl, {});
        await warm(url, auth);
      }
      const toRow = (server: Row['server'], r: LoadResult, cpuUs: Row['cpuUs']): Row => ({
        target: `${server === 'bare' ? (withDatabase ? 'bare Fastify + pg' : 'bare Fastify') : 'service'} ${method} ${shownPath}`,
        server,
        method,
        path: shownPath,
        connections,
        requestsPerSecond: Math.round(r.requestsPerSecond),
        p50Ms: r.latency.p50,
        p90Ms: r.latency.p90,
        p99Ms: r.latency.p99,
        maxMs: r.latency.max,
        non2xx: r.non2xx,
        errors: r.errors + r.timeouts,
        ratio: 1,
        cpuUs,
      });
      const base = await measured('bare', baseUrl, {});
      const full = await measured('service', url, auth);
      full.ratio = ratio(full.requestsPerSecond, base.requestsPerSecond);
      rows.push(base, full);
      console.log(
        `${method} ${shownPath} c=${connections}: bare ${base.requestsPerSecond}/s p99 ${base.p99Ms} ms (non-2xx ${base.non2xx}); ` +
          `service ${full.requestsPerSecond}/s p99 ${full.p99Ms} ms (non-2xx ${full.non2xx})`,
      );
    };

    const historyShown = `/v1/messages?with=<contact>&limit=${LIMIT}`;
    for (const connections of CURVE_LEVELS) await measure('GET', '/v1/me', '/v1/me', connections, false);
    for (const connections of READ_LEVELS) await measure('GET', contactsPath, contactsPath, connections, true);
    for (const connections of READ_LEVELS) await measure('GET', historyShown, historyPath, connections, true);
    await measure('POST', '/v1/messages', '/v1/messages', 50, true);
    await measure('GET', '/health/live', '/health/live', 50, false);

    await stopGracefully(bare.child, 'the bare server');
    await stopGracefully(service.child, 'the service');
    const notes: string[] = [];
    if (PROFILE) {
      const summary = summariseProfile(profileFile(PROFILE_NAME));
      writeSummary(PROFILE_NAME, summary);
      notes.push(formatProfile('CPU profile of the service process (dist/main.js) over the whole run, every row', summary));
    }

    const find = (server: Row['server'], method: Row['method'], path: string, connections: number) =>
      rows.find((r) => r.server === server && r.method === method && r.path === path && r.connections === connections);
    const targets: Array<{ target: string; measured: string; met: boolean }> = [];
    const ratioTarget = (target: string, method: Row['method'], path: string, connections: number, min: number, maxP99?: number) => {
      const full = find('service', method, path, connections);
      const base = find('bare', method, path, connections);
      if (!full || !base) return;
      const p99 = maxP99 === undefined ? '' : `, p99 ${full.p99Ms} ms`;
      targets.push({
        target,
        measured: `${full.ratio.toFixed(2)}× (${full.requestsPerSecond} vs ${base.requestsPerSecond} req/s at ${connections} connections${p99})`,
        met: full.ratio >= min && (maxP99 === undefined || full.p99Ms < maxP99),
      });
    };
    ratioTarget('GET /health/live ≥ 0.7× bare Fastify req/s', 'GET', '/health/live', 50, 0.7);
    ratioTarget('authenticated GET /v1/me ≥ 0.4× bare Fastify req/s at 50 connections', 'GET', '/v1/me', 50, 0.4);
    const me50 = find('service', 'GET', '/v1/me', 50);
    if (me50)
      targets.push({
        target: 'authenticated GET /v1/me p99 < 10 ms at 50 connections',
        measured: `p99 ${me50.p99Ms} ms`,
        met: me50.p99Ms < 10,
      });
    ratioTarget('authenticated GET /v1/me ≥ 0.4× bare Fastify req/s and p99 < 10 ms at 200 connections', 'GET', '/v1/me', 200, 0.4, 10);
    ratioTarget(`GET ${contactsPath} ≥ 0.5× bare Fastify + pg (same SQL) req/s at 50 connections`, 'GET', contactsPath, 50, 0.5);
    ratioTarget(`GET /v1/messages?with=… ≥ 0.5× bare Fastify + pg (same SQL) req/s at 50 connections`, 'GET', historyShown, 50, 0.5);
    ratioTarget(
      'POST /v1/messages ≥ 0.5× bare Fastify + pg (same inserts in one transaction) req/s at 50 connections',
      'POST',
      '/v1/messages',
      50,
      0.5,
    );

    // What limits the ratios: CPU per request of the server and of the load generator that shares the cores with it.
    for (const connections of [50, 200]) {
      const [b, f] = [find('bare', 'GET', '/v1/me', connections), find('service', 'GET', '/v1/me', connections)];
      if (b && f)
        notes.push(
          `GET /v1/me at ${connections} connections, CPU per request: bare Fastify ${b.cpuUs.server} µs, the service ${f.cpuUs.server} µs ` +
            `(${(f.cpuUs.server / Math.max(1, b.cpuUs.server)).toFixed(2)}×); the load generator ${b.cpuUs.loadGenerator} µs against the bare server ` +
            `and ${f.cpuUs.loadGenerator} µs against the service (it waits more, and each wake-up costs). ` +
            `A ratio of req/s near the inverse of the server's CPU ratio means the server's own CPU is the limit.`,
        );
    }
    const curve = (server: Row['server']) => {
      const points = rows.filter((r) => r.server === server && r.path === '/v1/me');
      return {
        connections: points.map((r) => r.connections),
        p50Ms: points.map((r) => r.p50Ms),
        p99Ms: points.map((r) => r.p99Ms),
        requestsPerSecond: points.map((r) => r.requestsPerSecond),
      };
    };
    writeResult({
      bench: 'http',
      title: 'HTTP: authenticated user API reads and sends',
      command: 'npm run bench:http',
      baseline:
        'bench/support/bare-server.js in its own process, measured right before each service row (the service is dist/main.js as the api role in its own process): ' +
        'bare Fastify answering the service’s JSON body for GET /v1/me and GET /health/live; bare Fastify + a pg Pool of the service’s size running the service’s SQL ' +
        'and answering the same JSON for GET /v1/contacts, GET /v1/messages?with=… and POST /v1/messages (the same one-statement send: Idempotency-Key row, message, recipient row, interaction weight, outbox event)',
      params: {
        durationSeconds: DURATION,
        curveLevels: CURVE_LEVELS,
        readLevels: READ_LEVELS,
        sendLevels: [50],
        serviceLogLevel: 'warn',
        poolSize: POOL_SIZE,
        contacts: CONTACTS,
        historyMessages: HISTORY_MESSAGES,
      },
      rows,
      tables: [
        {
          columns: [
            'target',
            'connections',
            'req/s',
            'p50 ms',
            'p99 ms',
            'max ms',
            'non-2xx',
            'errors',
            'ratio to bare',
            'CPU µs per request: server · PostgreSQL · Redis · load generator',
          ],
          rows: rows.map((r) => [
            r.target,
            r.connections,
            r.requestsPerSecond,
            r.p50Ms,
            r.p99Ms,
            r.maxMs,
            r.non2xx,
            r.errors,
            r.ratio,
            `${r.cpuUs.server} · ${r.cpuUs.postgres} · ${r.cpuUs.redis} · ${r.cpuUs.loadGenerator}`,
          ]),
        },
      ],
      targets,
      extra: { meCurve: { bare: curve('bare'), service: curve('service') } },
      notes,
    });
    const failed = rows.filter((r) => r.non2xx !== 0 || r.errors !== 0);
    expect(failed.map((r) => `${r.target} c=${r.connections}: non-2xx ${r.non2xx}, errors ${r.errors}`)).toEqual([]);
  } finally {
    if (bare) await stopGracefully(bare.child, 'the bare server');
    if (service) await stopGracefully(service.child, 'the service');
    await env.close();
    await idp.close();
  }
});
