import { getQueueToken } from '@nestjs/bullmq';
import { INestApplicationContext, Injectable, Module } from '@nestjs/common';
import { getDataSourceToken } from '@nestjs/typeorm';
import { Job, Queue } from 'bullmq';
import request from 'supertest';
import { DataSource, EntityManager } from 'typeorm';
import { newId } from '../../src/common/ids';
import { QUEUES } from '../../src/infra/queue/queues';
import { ExportsProcessor } from '../../src/modules/privacy/exports.processor';
import { BuildExportJob, BuildExportResult, EXPORT_JOBS } from '../../src/modules/privacy/exports.queue';
import { ExportsService } from '../../src/modules/privacy/exports.service';
import { PersonalDataSection, PersonalDataSource } from '../../src/common/personal-data';
import { factories } from '../support/factories';
import { TestIdentityProvider } from '../support/identity-provider';
import { TestEnvironment } from '../support/harness';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';

const PUBLIC_BASE_URL = 'https://api.example.test';
const DELETION_MESSAGE = 'Your soul record and everything derived from it were permanently deleted.';

/**
 * A personal data section of a made-up area, kept in memory and shared by the
 * api and the in-process worker of this file as a table would be.
 */
interface ProbeNote {
  id: string;
  text: string;
  created_at: string;
}
const probeNotes = new Map<string, ProbeNote[]>();
const failingExport = new Set<string>();
const failingErase = new Set<string>();
const observedTransactions: Array<{ isolation: string; readOnly: string }> = [];

@Injectable()
@PersonalDataSection()
class ProbeNotesSection implements PersonalDataSource {
  readonly section = 'probe_notes';

  async exportFor(userId: string, manager: EntityManager): Promise<ProbeNote[]> {
    const [settings]: Array<{ isolation: string; read_only: string }> = await manager.query(
      `SELECT current_setting('transaction_isolation') AS isolation, current_setting('transaction_read_only') AS read_only`,
    );
    observedTransactions.push({ isolation: settings.isolation, readOnly: settings.read_only });
    if (failingExport.has(userId)) throw new Error('probe notes are unavailable');
    return probeNotes.get(userId) ?? [];
  }

  async eraseWithSoul(userId: string, manager: EntityManager): Promise<number> {
    await manager.query('SELECT 1'); // runs inside the deletion's transaction
    if (failingErase.has(userId)) throw new Error('probe notes could not be erased');
    const count = probeNotes.get(userId)?.length ?? 0;
    probeNotes.delete(userId);
    return count;
  }
}

/** A section the privacy area must ignore: not marked. */
@Injectable()
class UnmarkedProvider {
  readonly section = 'unmarked';
  exportFor(): unknown {
    return ['must not appear'];
  }
}

@Module({ providers: [ProbeNotesSection, UnmarkedProvider] })
class ProbeSectionsModule {}

function fakeJob(exportId: string, attemptsMade = 0): Job<BuildExportJob, BuildExportResult> {
  return { name: EXPORT_JOBS.build, data: { exportId }, attemptsMade, opts: { attempts: 5 } } as unknown as Job<
    BuildExportJob,
    BuildExportResult
  >;
}

describe('privacy: soul export and deletion', () => {
  let idp: TestIdentityProvider;
  let env: TestEnvironment;
  let url: string;
  let dataSource: DataSource;
  let queue: Queue;
  let exportsService: ExportsService;

  beforeAll(async () => {
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create({ ...idp.env, PUBLIC_BASE_URL });
    const api = await env.startApi({ role: 'api', imports: [ProbeSectionsModule] });
    url = api.url;
    dataSource = api.app.get(getDataSourceToken());
    queue = api.app.get(getQueueToken(QUEUES.exports));
    exportsService = api.app.get(ExportsService);
  });
  afterAll(async () => {
    await env.close();
    await idp.close();
  });

  /** Logs in on the pro tier: polling for an export would exhaust the free tier's 60 requests a minute. */
  async function signIn(sub: string, name = sub, email = `${sub}@example.com`): Promise<LoggedInUser> {
    const user = await login(url, idp, { sub, name, email });
    await factories(dataSource).tier(user.id, 'pro');
    return user;
  }

  const requestExport = (user: LoggedInUser, body: object = { format: 'json' }) =>
    request(url).post('/v1/soul/export').set(user.auth).send(body);
  const getExport = (user: LoggedInUser, id: string) => request(url).get(`/v1/exports/${id}`).set(user.auth);
  const waitUntilReady = (user: LoggedInUser, id: string) =>
    waitFor(
      async () => {
        const res = await getExport(user, id);
        return res.status === 200 ? res : undefined;
      },
      { intervalMs: 200, timeoutMs: 20_000, what: `export ${id} to be ready` },
    );
  const exportRow = async (id: string) =>
    (
      await dataSource.query<Array<{ status: string; content: string | null; error: string | null; completed_at: Date | null }>>(
        `SELECT status, content, error, completed_at FROM exports WHERE id = $1`,
        [id],
      )
    )[0];
  /** A pending export row without a job. */
  const insertPendingExport = async (userId: string, createdAgo = '0 seconds') =>
    (await factories(dataSource).pendingExport(userId, { createdAgo })).id;

  describe('POST /v1/soul/export', () => {
    it.each([['pdf'], [''], [7], [['json']]])('refuses format %j with 400 BAD_REQUEST naming the allowed values', async (format) => {
      const user = await signIn('uid-format');
      const res = await requestExport(user, { format }).expect(400);
      expect(res.body.error).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
      expect(res.body.error.message).toContain('format');
      expect(res.body.error.message).toContain('json, markdown');
    });

    it('refuses a request without a bearer token with 401 UNAUTHORIZED', async () => {
      const res = await request(url).post('/v1/soul/export').send({ format: 'json' }).expect(401);
      expect(res.body.error).toMatchObject({ code: 'UNAUTHORIZED', status: 401 });
    });

    it('returns the same export for a repeated Idempotency-Key', async () => {
      const user = await signIn('uid-idempotent');
      const first = await requestExport(user).set('idempotency-key', 'export-once').expect(202);
      const second = await requestExport(user).set('idempotency-key', 'export-once').expect(202);
      expect(second.body).toEqual(first.body);
      const [{ count }] = await dataSource.query(`SELECT count(*)::int AS count FROM exports WHERE user_id = $1`, [user.id]);
      expect(count).toBe(1);
    });
  });

  it('answers 202 with the export result and builds the export in a separately started worker process', async () => {
    const ada = await signIn('uid-ada', 'Ada Lovelace', 'ada@example.com');
    const soul = await request(url)
      .patch('/v1/soul')
      .set(ada.auth)
      .send({ values: ['curiosity', 'rigour'] })
      .expect(200);

    // No body at all: json is the default format.
    const res = await request(url).post('/v1/soul/export').set(ada.auth).expect(202);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^exp_[0-9A-Za-z]{22}$/),
      status: 'pending',
      format: 'json',
      export_url: `${PUBLIC_BASE_URL}/v1/exports/${res.body.id}`,
      expires_at: expect.any(String),
    });
    const lifetime = Date.parse(res.body.expires_at) - Date.now();
    expect(lifetime).toBeGreaterThan(24 * 3600_000 - 60_000);
    expect(lifetime).toBeLessThanOrEqual(24 * 3600_000);
    const id: string = res.body.id;

    // The api role has no processor: the job waits and the download says so.
    expect(await queue.getJobState(id)).toBe('waiting');
    const pending = await getExport(ada, id).expect(202);
    expect(pending.headers['retry-after']).toBe('2');
    expect(pending.headers['cache-control']).toBe('private, no-store');
    expect(pending.body).toEqual({ id, status: 'pending' });

    const worker = env.spawnRole('worker');
    await worker.waitForOutput(/worker started/);
    const ready = await waitUntilReady(ada, id);
    expect(ready.headers['content-type']).toMatch(/^application\/json/);
    expect(ready.headers['content-disposition']).toBe(`attachment; filename="soul-export-${id}.json"`);
    expect(ready.headers['x-content-type-options']).toBe('nosniff');
    expect(ready.body).toMatchObject({
      exported_at: expect.any(String),
      format_version: 1,
      profile: { id: ada.id, name: 'Ada Lovelace', email: 'ada@example.com', created_at: expect.any(String), tier: 'pro' },
      soul: soul.body,
    });
    expect(Date.parse(ready.body.exported_at)).toBeLessThanOrEqual(Date.now());
    const job = await queue.getJob(id);
    expect(job?.returnvalue).toMatchObject({ exportId: id, outcome: 'built' });
    expect(job?.opts.attempts).toBeGreaterThan(1); // retried with the default job options

    worker.child.kill('SIGTERM');
    expect(await worker.exited).toEqual({ code: 0, signal: null });
  });

  describe('with a worker in this process', () => {
    let worker: INestApplicationContext;
    let processor: ExportsProcessor;
    let owner: LoggedInUser;
    let readyId: string;

    beforeAll(async () => {
      worker = await env.startWorker({ imports: [ProbeSectionsModule] });
      processor = worker.get(ExportsProcessor);
      owner = await signIn('uid-owner', 'Owner');
    });

    it('puts every @PersonalDataSection() in the export, read in one REPEATABLE READ read-only transaction', async () => {
      probeNotes.set(owner.id, [{ id: 'note-1', text: 'likes tea', created_at: '2025-01-01T00:00:00.000Z' }]);
      observedTransactions.length = 0;
      const res = await requestExport(owner).expect(202);
      readyId = res.body.id;
      const ready = await waitUntilReady(owner, readyId);
      expect(ready.body.probe_notes).toEqual(probeNotes.get(owner.id));
      expect(ready.body).not.toHaveProperty('unmarked');
      expect(observedTransactions).toEqual([{ isolation: 'repeatable read', readOnly: 'on' }]);
    });

    it('builds a markdown export: a heading per section and a table per list of records', async () => {
      probeNotes.set(owner.id, [
        { id: 'note-1', text: 'a | b', created_at: '2025-01-01T00:00:00.000Z' },
        { id: 'note-2', text: 'line one\nline two <script>alert(1)</script>', created_at: '2025-01-02T00:00:00.000Z' },
      ]);
      const res = await requestExport(owner, { format: 'markdown' }).expect(202);
      expect(res.body).toMatchObject({ format: 'markdown', status: 'pending' });
      const ready = await waitUntilReady(owner, res.body.id);
      expect(ready.headers['content-type']).toBe('text/markdown; charset=utf-8');
      expect(ready.headers['content-disposition']).toBe(`attachment; filename="soul-export-${res.body.id}.md"`);
      const text = ready.text;
      expect(text).toMatch(/^# Your personal data\n/);
      expect(text).toContain('## Profile\n\n| Field | Value |\n|---|---|\n| id | ' + owner.id + ' |');
      expect(text).toContain('## Soul record\n\n| Trait | Value |');
      expect(text).toContain('| communication_style | diplomatic |');
      expect(text).toContain('## Probe notes (2)\n\n| id | text | created_at |\n|---|---|---|');
      expect(text).toContain('| note-1 | a \\| b | 2025-01-01T00:00:00.000Z |');
      expect(text).toContain('line one<br>line two \\<script\\>alert(1)\\</script\\>');
      // A section made of lists (messages: sent and received) gets a sub-heading and a table each, never one cell of JSON.
      expect(text).toMatch(/## Messages\n\n### Sent \(\d+\)\n\n/);
      expect(text).toMatch(/### Received \(\d+\)\n\n/);
      expect(text).not.toContain('{"sent"');
    });

    it("answers 404 NOT_FOUND for another user's export and for an unknown or malformed id", async () => {
      const stranger = await signIn('uid-stranger');
      for (const id of [readyId, newId('exp'), 'not-an-id']) {
        const res = await getExport(stranger, id).expect(404);
        expect(res.body.error).toMatchObject({ code: 'NOT_FOUND', status: 404 });
      }
      await getExport(owner, readyId).expect(200);
    });

    it('answers 410 GONE once the export has expired, and 404 after the retention purge', async () => {
      const res = await requestExport(owner).expect(202);
      const id: string = res.body.id;
      await waitUntilReady(owner, id);
      await factories(dataSource).expireExport(id, '1 minute');
      const gone = await getExport(owner, id).expect(410);
      expect(gone.body.error).toMatchObject({ code: 'GONE', status: 410 });
      expect(gone.body.error.message).toContain('POST /v1/soul/export');

      // The content goes at the first purge; the row answers 410 for 7 days more.
      expect((await exportsService.purgeExpired()).exportContentsDropped).toBeGreaterThanOrEqual(1);
      expect(await exportRow(id)).toMatchObject({ status: 'ready', content: null });
      await getExport(owner, id).expect(410);

      await factories(dataSource).expireExport(id, '8 days');
      expect((await exportsService.purgeExpired()).exportsPurged).toBeGreaterThanOrEqual(1);
      expect(await exportRow(id)).toBeUndefined();
      await getExport(owner, id).expect(404);
    });

    it('builds a pending export whose job was recorded but never relayed (Redis refused it at the time): the relay moves it', async () => {
      const lost = await insertPendingExport(owner.id, '2 minutes');
      await factories(dataSource).outboxJob({ id: lost, queue: 'exports', name: 'build-export', data: { exportId: lost } });
      await waitUntilReady(owner, lost);
      await waitFor(async () => (await dataSource.query(`SELECT 1 FROM job_outbox WHERE id = $1`, [lost])).length === 0, {
        what: 'the finished job to leave the outbox',
      });
    });

    it('does nothing when the processor runs for an export that is already ready or no longer exists', async () => {
      const before = await exportRow(readyId);
      expect(before.status).toBe('ready');
      await expect(processor.process(fakeJob(readyId))).resolves.toEqual({
        exportId: readyId,
        outcome: 'skipped',
        reason: 'the export is already ready',
      });
      expect(await exportRow(readyId)).toEqual(before);

      const unknown = newId('exp');
      await expect(processor.process(fakeJob(unknown))).resolves.toMatchObject({
        outcome: 'skipped',
        reason: 'the export no longer exists',
      });
    });

    it('keeps the export pending while attempts remain, marks it failed after the last, and then answers 500 INTERNAL_ERROR', async () => {
      const unlucky = await signIn('uid-unlucky');
      failingExport.add(unlucky.id);
      const id = await insertPendingExport(unlucky.id);

      await expect(processor.process(fakeJob(id, 0))).rejects.toThrow('probe notes are unavailable');
      expect(await exportRow(id)).toMatchObject({ status: 'pending', error: null });
      await getExport(unlucky, id).expect(202);

      await expect(processor.process(fakeJob(id, 4))).rejects.toThrow('probe notes are unavailable');
      expect(await exportRow(id)).toMatchObject({ status: 'failed', error: 'probe notes are unavailable', content: null });
      const res = await getExport(unlucky, id).expect(500);
      expect(res.body.error).toEqual({
        code: 'INTERNAL_ERROR',
        message: `Export ${id} could not be built; request a new one with POST /v1/soul/export`,
        status: 500,
      });
      failingExport.delete(unlucky.id);
    });

    describe('DELETE /v1/soul', () => {
      let bob: LoggedInUser;
      let bobExports: string[];

      beforeAll(async () => {
        bob = await signIn('uid-bob', 'Bob');
        probeNotes.set(bob.id, [
          { id: 'note-b1', text: 'from the soul', created_at: '2025-02-01T00:00:00.000Z' },
          { id: 'note-b2', text: 'also derived', created_at: '2025-02-02T00:00:00.000Z' },
        ]);
        const built = (await requestExport(bob).expect(202)).body.id as string;
        await waitUntilReady(bob, built);
        bobExports = [built, await insertPendingExport(bob.id)];
      });

      it('rolls the whole deletion back when one part of it fails', async () => {
        failingErase.add(bob.id);
        const res = await request(url).delete('/v1/soul').set(bob.auth).expect(500);
        expect(res.body.error).toMatchObject({ code: 'INTERNAL_ERROR' });
        failingErase.delete(bob.id);
        await request(url).get('/v1/soul').set(bob.auth).expect(200);
        const [{ count }] = await dataSource.query(`SELECT count(*)::int AS count FROM exports WHERE user_id = $1`, [bob.id]);
        expect(count).toBe(2);
        const events = await dataSource.query(`SELECT id FROM events WHERE type = 'soul.deleted' AND payload->>'user_id' = $1`, [bob.id]);
        expect(events).toEqual([]);
      });

      it('deletes the soul record, its exports and what was derived from it in one go, and answers the deletion result', async () => {
        const res = await request(url).delete('/v1/soul').set(bob.auth).expect(200);
        expect(res.body).toEqual({ deleted: true, message: DELETION_MESSAGE });

        expect(await dataSource.query(`SELECT id FROM souls WHERE user_id = $1`, [bob.id])).toEqual([]);
        expect(await dataSource.query(`SELECT id FROM exports WHERE user_id = $1`, [bob.id])).toEqual([]);
        expect(probeNotes.has(bob.id)).toBe(false);
        for (const id of bobExports) await getExport(bob, id).expect(404);

        const [user] = await dataSource.query(`SELECT soul_deleted_at FROM users WHERE id = $1`, [bob.id]);
        expect(user.soul_deleted_at).toBeInstanceOf(Date);
        const events = await dataSource.query(`SELECT payload FROM events WHERE type = 'soul.deleted' AND payload->>'user_id' = $1`, [
          bob.id,
        ]);
        expect(events).toEqual([
          {
            payload: {
              user_id: bob.id,
              deleted_at: (user.soul_deleted_at as Date).toISOString(),
              erased: expect.objectContaining({ soul: 1, exports: 2, probe_notes: 2, agent_actions: 0 }),
            },
          },
        ]);
      });

      it('answers 404 NOT_FOUND to a second DELETE and to GET and PATCH /v1/soul; /v1/me shows soul_id null', async () => {
        const again = await request(url).delete('/v1/soul').set(bob.auth).expect(404);
        expect(again.body.error).toMatchObject({ code: 'NOT_FOUND', status: 404 });
        await request(url).get('/v1/soul').set(bob.auth).expect(404);
        await request(url)
          .patch('/v1/soul')
          .set(bob.auth)
          .send({ values: ['back again'] })
          .expect(404);
        const me = await request(url).get('/v1/me').set(bob.auth).expect(200);
        expect(me.body).toMatchObject({ id: bob.id, soul_id: null });
      });

      it('does not create a new soul record at the next login', async () => {
        const again = await login(url, idp, { sub: 'uid-bob', name: 'Bob', email: 'uid-bob@example.com' });
        expect(again.id).toBe(bob.id);
        const me = await request(url).get('/v1/me').set(again.auth).expect(200);
        expect(me.body.soul_id).toBeNull();
        expect(await dataSource.query(`SELECT id FROM souls WHERE user_id = $1`, [bob.id])).toEqual([]);
      });

      it('still builds a new export afterwards, with soul: null', async () => {
        const res = await requestExport(bob).expect(202);
        const ready = await waitUntilReady(bob, res.body.id);
        expect(ready.body).toMatchObject({ profile: { id: bob.id }, soul: null, probe_notes: [] });
      });
    });
  });
});
