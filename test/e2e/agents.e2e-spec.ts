import { getDataSourceToken } from '@nestjs/typeorm';
import request from 'supertest';
import { DataSource } from 'typeorm';
import { newId } from '../../src/common/ids';
import { AgentActionsPersonalData } from '../../src/modules/agents/agent-actions.personal-data';
import { getQueueToken } from '@nestjs/bullmq';
import { Queue } from 'bullmq';
import { QUEUES } from '../../src/infra/queue/queues';
import { factories } from '../support/factories';
import { TestEnvironment } from '../support/harness';
import { TestIdentityProvider } from '../support/identity-provider';
import { TestLlmServer } from '../support/llm-server';
import { login, LoggedInUser } from '../support/users';
import { waitFor } from '../support/wait-for';

const DRAFT = { to: 'jane.doe@example.com', subject: 'Quarterly report', context: 'Could you send me the final report by Friday?' };
let userCount = 0;

/** A fresh user (own rate limit, own soul) with a unique email, so contacts link to exactly this user. */
function newUser(url: string, idp: TestIdentityProvider, name = 'Grace Hopper'): Promise<LoggedInUser> {
  userCount += 1;
  return login(url, idp, { sub: `uid-agents-${userCount}`, name, email: `agents-user-${userCount}@example.com` });
}

function execute(url: string, user: LoggedInUser, body: object, idempotencyKey?: string) {
  const call = request(url).post('/v1/agents/execute').set(user.auth);
  if (idempotencyKey) void call.set('idempotency-key', idempotencyKey);
  return call.send(body);
}

const setTraits = (url: string, user: LoggedInUser, traits: Record<string, unknown>, values?: string[]) =>
  request(url)
    .patch('/v1/soul')
    .set(user.auth)
    .send({ traits, ...(values ? { values } : {}) })
    .expect(200);

/** Waits (bounded) until the worker finished the action, then reads it through the API. */
async function settled(url: string, db: DataSource, user: LoggedInUser, id: string) {
  await waitFor(
    async () => {
      const [row] = await db.query(`SELECT status FROM agent_actions WHERE id = $1`, [id]);
      return row && (row.status === 'completed' || row.status === 'failed');
    },
    { what: `agent action ${id} to finish` },
  );
  return (await request(url).get(`/v1/agents/actions/${id}`).set(user.auth).expect(200)).body;
}

describe('agent actions (POST /v1/agents/execute, GET /v1/agents/actions/:id)', () => {
  let idp: TestIdentityProvider;
  let env: TestEnvironment;
  let url: string;
  let db: DataSource;
  let agentsQueue: Queue;
  let personalData: AgentActionsPersonalData;
  let workerStarted = false;
  const ensureWorker = async () => {
    if (!workerStarted) await env.startWorker();
    workerStarted = true;
  };

  beforeAll(async () => {
    idp = await TestIdentityProvider.start();
    env = await TestEnvironment.create(idp.env);
    const api = await env.startApi();
    url = api.url;
    db = api.app.get(getDataSourceToken());
    agentsQueue = api.app.get(getQueueToken(QUEUES.agents));
    personalData = api.app.get(AgentActionsPersonalData);
  });
  afterAll(async () => {
    await env.close();
    await idp.close();
  });

  describe('before any worker runs', () => {
    it('answers 202 queued with a Location after waiting briefly, and GET reports completed once a worker starts', async () => {
      const user = await newUser(url, idp);
      const startedAt = Date.now();
      const res = await execute(url, user, { action: 'draft_email', params: DRAFT }).expect(202);
      expect(Date.now() - startedAt).toBeLessThan(4_000);
      expect(res.body).toEqual({ id: expect.stringMatching(/^act_[0-9A-Za-z]{22}$/), status: 'queued' });
      expect(res.headers.location).toBe(`/v1/agents/actions/${res.body.id}`);

      const queued = await request(url).get(`/v1/agents/actions/${res.body.id}`).set(user.auth).expect(200);
      expect(queued.body).toEqual({
        id: res.body.id,
        action: 'draft_email',
        status: 'queued',
        result: null,
        error: null,
        created_at: expect.any(String),
        completed_at: null,
      });

      await ensureWorker();
      const done = await settled(url, db, user, res.body.id);
      expect(done).toEqual({
        id: res.body.id,
        action: 'draft_email',
        status: 'completed',
        result: { draft: expect.stringContaining('Grace Hopper'), subject: DRAFT.subject, to: DRAFT.to, source: 'composer' },
        error: null,
        created_at: queued.body.created_at,
        completed_at: expect.any(String),
      });
      expect(Date.parse(done.completed_at)).toBeGreaterThanOrEqual(Date.parse(done.created_at));
    });
  });

  describe('validation', () => {
    let user: LoggedInUser;
    beforeAll(async () => (user = await newUser(url, idp)));

    it('answers 400 BAD_REQUEST naming params.to for an address that is not an email', async () => {
      const res = await execute(url, user, { action: 'draft_email', params: { ...DRAFT, to: 'not-an-email' } }).expect(400);
      expect(res.body).toEqual({ error: { code: 'BAD_REQUEST', message: 'params.to must be an email address', status: 400 } });
    });

    it('names missing, too long and unknown params fields', async () => {
      const missing = await execute(url, user, { action: 'draft_email', params: { to: DRAFT.to } }).expect(400);
      expect(missing.body.error.message).toContain('params.subject is required');
      expect(missing.body.error.message).toContain('params.context is required');
      const long = await execute(url, user, { action: 'draft_email', params: { ...DRAFT, subject: 'x'.repeat(201) } }).expect(400);
      expect(long.body.error.message).toMatch(/^params\.subject must be shorter than or equal to 200 characters/);
      const blank = await execute(url, user, { action: 'draft_email', params: { ...DRAFT, context: '   ' } }).expect(400);
      expect(blank.body.error.message).toMatch(/^params\.context must be longer than or equal to 1/);
      const extra = await execute(url, user, { action: 'draft_email', params: { ...DRAFT, cc: 'x@example.com' } }).expect(400);
      expect(extra.body.error.message).toBe('params.cc is not a known field');
      const limit = await execute(url, user, {
        action: 'summarize_conversation',
        params: { contact_id: newId('con'), limit: 500 },
      }).expect(400);
      expect(limit.body.error.message).toMatch(/^params\.limit must not be greater than 200/);
      const contact = await execute(url, user, { action: 'suggest_reply', params: { contact_id: 'usr_nope' } }).expect(400);
      expect(contact.body.error.message).toBe('params.contact_id must be a contact id (con_…)');
    });

    it('answers 400 BAD_REQUEST listing the known actions for an unknown action', async () => {
      const res = await execute(url, user, { action: 'book_flight', params: {} }).expect(400);
      expect(res.body.error).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
      expect(res.body.error.message).toBe(
        'Unknown action "book_flight"; known actions: draft_email, summarize_conversation, suggest_reply',
      );
    });

    it('answers 400 when action or params is missing or params is not an object', async () => {
      expect((await execute(url, user, { params: DRAFT }).expect(400)).body.error.message).toContain('action is required');
      expect((await execute(url, user, { action: 'draft_email' }).expect(400)).body.error.message).toContain('params is required');
      expect((await execute(url, user, { action: 'draft_email', params: 'hi' }).expect(400)).body.error.message).toContain('params');
    });

    it('records nothing for a refused request', async () => {
      const [{ count }] = await db.query(`SELECT count(*)::int AS count FROM agent_actions WHERE user_id = $1`, [user.id]);
      expect(count).toBe(0);
    });

    it('requires a bearer token', async () => {
      await request(url).post('/v1/agents/execute').send({ action: 'draft_email', params: DRAFT }).expect(401);
      await request(url)
        .get(`/v1/agents/actions/${newId('act')}`)
        .expect(401);
    });
  });

  describe('with a worker', () => {
    beforeAll(ensureWorker);

    it('completes draft_email within the request (200) with a draft shaped by the soul', async () => {
      const user = await newUser(url, idp);
      await setTraits(url, user, { formality: 0.9 });
      const formal = await execute(url, user, { action: 'draft_email', params: DRAFT }).expect(200);
      expect(formal.body).toEqual({
        id: expect.stringMatching(/^act_/),
        status: 'completed',
        result: { draft: expect.any(String), subject: DRAFT.subject, to: DRAFT.to, source: 'composer' },
      });
      expect(formal.body.result.draft).toMatch(/^Dear Jane Doe,/);
      expect(formal.body.result.draft).toMatch(/Kind regards,\nGrace Hopper$/);

      await setTraits(url, user, { formality: 0.1 });
      const casual = await execute(url, user, { action: 'draft_email', params: DRAFT }).expect(200);
      expect(casual.body.result.draft).toMatch(/^Hi Jane,/);
      expect(casual.body.result.draft).toMatch(/Cheers,\nGrace$/);
    });

    it('reflects communication style, empathy and humour in the draft', async () => {
      const user = await newUser(url, idp);
      await setTraits(url, user, { communication_style: 'analytical', empathy: 0.9, humour: 'witty', formality: 0.5 });
      const res = await execute(url, user, {
        action: 'draft_email',
        params: { ...DRAFT, context: 'Sales rose 4%. Costs fell 2%. Please confirm the figures.' },
      }).expect(200);
      expect(res.body.result.draft).toContain('1. Sales rose 4%.\n2. Costs fell 2%.\n3. Please confirm the figures.');
      expect(res.body.result.draft).toContain("I hope you're doing well.");
      expect(res.body.result.draft).toContain('P.S.');
    });

    it('writes an instruction as a message to the recipient instead of echoing it (built-in composer)', async () => {
      const user = await newUser(url, idp);
      const res = await execute(url, user, {
        action: 'draft_email',
        params: { to: 'bob@example.com', subject: 'Dinner', context: 'invite Bob to dinner on Friday' },
      }).expect(200);
      expect(res.body.result.source).toBe('composer');
      expect(res.body.result.draft).toContain('Would you like to come over for dinner on Friday?');
      expect(res.body.result.draft).not.toMatch(/invite Bob/i);
    });

    it('writes with neutral defaults when the user has deleted their soul', async () => {
      const user = await newUser(url, idp);
      await setTraits(url, user, { formality: 0.95, humour: 'playful' });
      await factories(db).deleteSoulOutsideService(user.id);
      const res = await execute(url, user, { action: 'draft_email', params: DRAFT }).expect(200);
      expect(res.body.result.draft).toMatch(/^Hello Jane Doe,/);
      expect(res.body.result.draft).not.toContain('P.S.');
    });

    describe('idempotency', () => {
      it('answers a retry with the same key for the same action, marked Idempotent-Replayed, with one row', async () => {
        const user = await newUser(url, idp);
        const body = { action: 'draft_email', params: DRAFT };
        const first = await execute(url, user, body, 'draft-key-1').expect(200);
        expect(first.headers['idempotent-replayed']).toBeUndefined();
        const second = await execute(url, user, { params: { ...DRAFT }, action: 'draft_email' }, 'draft-key-1').expect(200);
        expect(second.headers['idempotent-replayed']).toBe('true');
        expect(second.body).toEqual(first.body);
        const [{ count }] = await db.query(`SELECT count(*)::int AS count FROM agent_actions WHERE user_id = $1`, [user.id]);
        expect(count).toBe(1);
      });

      it('creates one action when the same key races', async () => {
        const user = await newUser(url, idp);
        const answers = await Promise.all(
          Array.from({ length: 4 }, () => execute(url, user, { action: 'draft_email', params: DRAFT }, 'race-key')),
        );
        expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
        expect(new Set(answers.map((a) => a.body.id)).size).toBe(1);
        expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(3);
        const [{ count }] = await db.query(`SELECT count(*)::int AS count FROM agent_actions WHERE user_id = $1`, [user.id]);
        expect(count).toBe(1);
      });

      it('refuses the same key with a different body with 400 BAD_REQUEST', async () => {
        const user = await newUser(url, idp);
        await execute(url, user, { action: 'draft_email', params: DRAFT }, 'draft-key-2').expect(200);
        const res = await execute(url, user, { action: 'draft_email', params: { ...DRAFT, subject: 'Other' } }, 'draft-key-2').expect(400);
        expect(res.body.error.code).toBe('BAD_REQUEST');
        expect(res.body.error.message).toMatch(/Idempotency-Key/);
      });

      it('keeps keys per user and creates separate actions without a key', async () => {
        const [a, b] = [await newUser(url, idp), await newUser(url, idp)];
        const first = await execute(url, a, { action: 'draft_email', params: DRAFT }, 'shared-key').expect(200);
        const other = await execute(url, b, { action: 'draft_email', params: DRAFT }, 'shared-key').expect(200);
        expect(other.body.id).not.toBe(first.body.id);
        const x = await execute(url, a, { action: 'draft_email', params: DRAFT }).expect(200);
        const y = await execute(url, a, { action: 'draft_email', params: DRAFT }).expect(200);
        expect(x.body.id).not.toBe(y.body.id);
      });
    });

    it("answers 404 for another user's action and for ids that are not actions", async () => {
      const owner = await newUser(url, idp);
      const stranger = await newUser(url, idp);
      const { body } = await execute(url, owner, { action: 'draft_email', params: DRAFT }).expect(200);
      const res = await request(url).get(`/v1/agents/actions/${body.id}`).set(stranger.auth).expect(404);
      expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: `No agent action ${body.id}`, status: 404 } });
      await request(url)
        .get(`/v1/agents/actions/${newId('act')}`)
        .set(owner.auth)
        .expect(404);
      await request(url).get(`/v1/agents/actions/not-an-id`).set(owner.auth).expect(404);
    });

    it('runs an action whose job was recorded but never relayed (Redis refused it at the time): the relay moves it', async () => {
      const user = await newUser(url, idp);
      const { id } = await factories(db).agentAction(user.id, { action: 'draft_email', params: DRAFT });
      await factories(db).outboxJob({ id, queue: 'agents', name: 'run-action', data: { actionId: id } });
      const done = await settled(url, db, user, id);
      expect(done).toMatchObject({ status: 'completed', result: { source: 'composer' } });
    });

    it('runs a job twice at most once: a finished action is left alone', async () => {
      const user = await newUser(url, idp);
      const { body } = await execute(url, user, { action: 'draft_email', params: DRAFT }).expect(200);
      const [before] = await db.query(`SELECT result, completed_at FROM agent_actions WHERE id = $1`, [body.id]);
      // A duplicate delivery of the same action, under another job id so BullMQ accepts it.
      const duplicate = await agentsQueue.add('run-action', { actionId: body.id }, { jobId: `dup.${body.id}` });
      await waitFor(async () => (await duplicate.getState()) === 'completed', { what: 'the duplicate job to finish' });
      const [after] = await db.query(`SELECT status, result, completed_at FROM agent_actions WHERE id = $1`, [body.id]);
      expect(after).toEqual({ status: 'completed', result: before.result, completed_at: before.completed_at });
    });

    describe('conversation actions', () => {
      let ada: LoggedInUser;
      let charles: LoggedInUser;
      let charlesForAda: string;
      let adaForCharles: string;
      let question: string;

      const send = async (from: LoggedInUser, to: string, content: string) =>
        (await request(url).post('/v1/messages').set(from.auth).send({ recipient_id: to, content, type: 'text' }).expect(201)).body;

      beforeAll(async () => {
        ada = await newUser(url, idp, 'Ada Lovelace');
        charles = await newUser(url, idp, 'Charles Babbage');
        const adaEmail = `agents-user-${userCount - 1}@example.com`;
        const charlesEmail = `agents-user-${userCount}@example.com`;
        charlesForAda = (
          await request(url).post('/v1/contacts').set(ada.auth).send({ name: 'Charles Babbage', email: charlesEmail }).expect(201)
        ).body.id;
        adaForCharles = (await request(url).post('/v1/contacts').set(charles.auth).send({ name: 'Ada', email: adaEmail }).expect(201)).body
          .id;
        await send(ada, charlesForAda, 'Here is the budget draft for the engine.');
        await send(ada, charlesForAda, 'The budget looks fine to me.');
        question = (await send(charles, adaForCharles, 'Can you send the final budget report before Friday?')).id;
      });

      it('summarize_conversation summarises the conversation with the contact', async () => {
        const res = await execute(url, ada, { action: 'summarize_conversation', params: { contact_id: charlesForAda } }).expect(200);
        expect(res.body).toEqual({
          id: expect.stringMatching(/^act_/),
          status: 'completed',
          result: { summary: expect.any(String), message_count: 3, first_at: expect.any(String), last_at: expect.any(String) },
        });
        const { summary, first_at, last_at } = res.body.result;
        expect(summary).toMatch(/^3 messages with Charles Babbage (on|between) .+ \(2 from you, 1 from Charles Babbage\)\./);
        expect(summary).toContain('Frequent topics: budget.');
        expect(summary).toContain('Latest, from Charles Babbage');
        expect(summary).toContain('Can you send the final budget report before Friday?');
        expect(Date.parse(first_at)).toBeLessThanOrEqual(Date.parse(last_at));
      });

      it('summarize_conversation honours limit (the latest messages) and says when there are none', async () => {
        const res = await execute(url, ada, { action: 'summarize_conversation', params: { contact_id: charlesForAda, limit: 1 } }).expect(
          200,
        );
        expect(res.body.result.message_count).toBe(1);
        const empty = (await request(url).post('/v1/contacts').set(ada.auth).send({ name: 'Nobody Yet' }).expect(201)).body.id;
        const none = await execute(url, ada, { action: 'summarize_conversation', params: { contact_id: empty } }).expect(200);
        expect(none.body.result).toEqual({ summary: 'No messages with Nobody Yet yet.', message_count: 0, first_at: null, last_at: null });
      });

      it('suggest_reply answers the latest inbound message in the voice of the soul', async () => {
        await setTraits(url, ada, { formality: 0.1, communication_style: 'diplomatic', empathy: 0.5, humour: 'none' });
        const casual = await execute(url, ada, { action: 'suggest_reply', params: { contact_id: charlesForAda } }).expect(200);
        expect(casual.body.result.in_reply_to).toBe(question);
        expect(casual.body.result.suggestions.length).toBeGreaterThanOrEqual(2);
        expect(casual.body.result.suggestions.length).toBeLessThanOrEqual(3);
        expect(casual.body.result.suggestions[0]).toContain("I'll get back to you");

        await setTraits(url, ada, { formality: 0.9 });
        const formal = await execute(url, ada, { action: 'suggest_reply', params: { contact_id: charlesForAda } }).expect(200);
        expect(formal.body.result.suggestions[0]).toContain('I will look into it');
        expect(formal.body.result.suggestions).not.toEqual(casual.body.result.suggestions);
      });

      it('suggest_reply suggests openers when nothing came in from the contact', async () => {
        await setTraits(url, charles, { formality: 0.1 });
        const quiet = (await request(url).post('/v1/contacts').set(charles.auth).send({ name: 'Mary Somerville' }).expect(201)).body.id;
        const res = await execute(url, charles, { action: 'suggest_reply', params: { contact_id: quiet } }).expect(200);
        expect(res.body.result).toEqual({ suggestions: expect.any(Array), in_reply_to: null });
        expect(res.body.result.suggestions[0]).toBe('Hey Mary! How have you been?');
      });

      it("answers 404 NOT_FOUND for another user's contact and records nothing", async () => {
        for (const action of ['summarize_conversation', 'suggest_reply']) {
          const res = await execute(url, ada, { action, params: { contact_id: adaForCharles } }).expect(404);
          expect(res.body.error).toMatchObject({ code: 'NOT_FOUND', status: 404 });
        }
        await execute(url, ada, { action: 'suggest_reply', params: { contact_id: newId('con') } }).expect(404);
        const [{ count }] = await db.query(
          `SELECT count(*)::int AS count FROM agent_actions WHERE user_id = $1 AND params->>'contact_id' <> $2`,
          [ada.id, charlesForAda],
        );
        expect(count).toBe(1); // only the empty-contact summary above
      });

      it('fails the action with a readable error when the contact is deleted before it runs', async () => {
        const gone = (await request(url).post('/v1/contacts').set(ada.auth).send({ name: 'Soon Gone' }).expect(201)).body.id;
        const { id } = await factories(db).agentAction(ada.id, { action: 'suggest_reply', params: { contact_id: gone } });
        await request(url).delete(`/v1/contacts/${gone}`).set(ada.auth).expect(204);
        await factories(db).outboxJob({ id, queue: 'agents', name: 'run-action', data: { actionId: id } });
        const failed = await settled(url, db, ada, id);
        expect(failed).toMatchObject({
          status: 'failed',
          result: null,
          error: `Contact ${gone} no longer exists`,
          completed_at: expect.any(String),
        });
      });
    });

    describe('personal data', () => {
      it('exports the actions and erases them with the soul', async () => {
        const user = await newUser(url, idp);
        const { body } = await execute(url, user, { action: 'draft_email', params: DRAFT }).expect(200);
        const section = personalData;
        expect(section.section).toBe('agent_actions');
        const exported = await db.transaction((manager) => section.exportFor(user.id, manager));
        expect(exported).toEqual([
          {
            id: body.id,
            action: 'draft_email',
            params: DRAFT,
            status: 'completed',
            result: body.result,
            error: null,
            created_at: expect.any(String),
            completed_at: expect.any(String),
          },
        ]);
        expect(await db.transaction((manager) => section.eraseWithSoul(user.id, manager))).toBe(1);
        await request(url).get(`/v1/agents/actions/${body.id}`).set(user.auth).expect(404);
      });
    });
  });
});

describe('agent actions with a language model (AGENT_LLM_URL)', () => {
  let idp: TestIdentityProvider;
  let llm: TestLlmServer;
  let env: TestEnvironment;
  let url: string;

  beforeAll(async () => {
    idp = await TestIdentityProvider.start();
    llm = await TestLlmServer.start();
    const llmEnv = { AGENT_LLM_URL: llm.url, AGENT_LLM_MODEL: 'test-model', AGENT_LLM_API_KEY: 'sk-test-secret' };
    env = await TestEnvironment.create(idp.env);
    url = (await env.startApi({ env: llmEnv })).url;
    await env.startWorker({ env: llmEnv });
  });
  afterAll(async () => {
    await env.close();
    await llm.close();
    await idp.close();
  });

  it('drafts with the model, sending the soul traits in the system prompt and the request in the user prompt', async () => {
    llm.answerWith((req) => `Dear Jane,\n\nDrafted by ${req.model}.\n\nKind regards,\nGrace`);
    const user = await newUser(url, idp);
    await setTraits(url, user, { communication_style: 'analytical', humour: 'witty', formality: 0.9, empathy: 0.2 }, [
      'honesty',
      'curiosity',
    ]);
    const before = llm.requests.length;

    const res = await execute(url, user, { action: 'draft_email', params: DRAFT }).expect(200);
    expect(res.body.result).toEqual({
      draft: 'Dear Jane,\n\nDrafted by test-model.\n\nKind regards,\nGrace',
      subject: DRAFT.subject,
      to: DRAFT.to,
      source: 'llm',
    });

    expect(llm.requests).toHaveLength(before + 1);
    const sent = llm.requests[before];
    expect(sent).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
    expect(sent.headers.authorization).toBe('Bearer sk-test-secret');
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.body.model).toBe('test-model');
    expect(sent.body.messages.map((m) => m.role)).toEqual(['system', 'user']);
    const [system, prompt] = sent.body.messages.map((m) => m.content);
    expect(system).toContain('communication_style: analytical');
    expect(system).toContain('humour: witty');
    expect(system).toContain('formality: 0.90');
    expect(system).toContain('empathy: 0.20');
    expect(system).toContain('values: honesty, curiosity');
    expect(system).toContain('Grace Hopper');
    expect(prompt).toContain(`To: Jane Doe <${DRAFT.to}>`);
    expect(prompt).toContain(`Subject: ${DRAFT.subject}`);
    expect(prompt).toContain(DRAFT.context);
  });

  it('falls back to the built-in composer when the model answers 500', async () => {
    llm.failWith(500);
    const user = await newUser(url, idp);
    await setTraits(url, user, { formality: 0.9 });
    const before = llm.requests.length;
    const res = await execute(url, user, { action: 'draft_email', params: DRAFT }).expect(200);
    expect(llm.requests.length).toBe(before + 1);
    expect(res.body.result.source).toBe('composer');
    expect(res.body.result.draft).toMatch(/^Dear Jane Doe,/);
  });

  it('falls back to the composer when the answer has no content', async () => {
    const user = await newUser(url, idp);
    for (const body of ['{"choices":[]}', 'not json at all', '{"choices":[{"message":{"content":"   "}}]}']) {
      llm.answerRaw(body);
      const res = await execute(url, user, { action: 'draft_email', params: DRAFT }).expect(200);
      expect(res.body.result.source).toBe('composer');
    }
  });
});

describe('agent actions with a local OpenAI-compatible server addressed by its base URL (AGENT_LLM_URL=…/v1, as for Ollama)', () => {
  let idp: TestIdentityProvider;
  let llm: TestLlmServer;
  let env: TestEnvironment;
  let url: string;

  beforeAll(async () => {
    idp = await TestIdentityProvider.start();
    llm = await TestLlmServer.start();
    // What the README tells an Ollama user to set: the base URL, a model name, no API key.
    const llmEnv = { AGENT_LLM_URL: llm.baseUrl, AGENT_LLM_MODEL: 'llama3.2' };
    env = await TestEnvironment.create(idp.env);
    url = (await env.startApi({ env: llmEnv })).url;
    await env.startWorker({ env: llmEnv });
  });
  afterAll(async () => {
    await env.close();
    await llm.close();
    await idp.close();
  });

  it('posts to <base>/chat/completions with the model and no key, and returns the model draft', async () => {
    llm.answerWith('Hi Bob,\n\nWould you like to come over for dinner on Friday?\n\nCheers,\nGrace');
    const user = await newUser(url, idp);
    const before = llm.requests.length;
    const res = await execute(url, user, {
      action: 'draft_email',
      params: { to: 'bob@example.com', subject: 'Dinner', context: 'invite Bob to dinner on Friday' },
    }).expect(200);
    expect(res.body.result).toMatchObject({ source: 'llm', draft: expect.stringContaining('come over for dinner') });
    expect(llm.requests).toHaveLength(before + 1);
    const sent = llm.requests[before];
    expect(sent).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
    expect(sent.body.model).toBe('llama3.2');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body.messages[1].content).toContain('invite Bob to dinner on Friday');
  });
});
