#!/usr/bin/env node
/**
 * Baseline of the HTTP benchmark: a bare Fastify server (`logger: false`) in
 * its own process, like the service it is compared with, with a `pg` Pool of
 * the service's size on the service's database. It answers the routes the
 * bench measures with the service's SQL for the same user (the bench builds
 * the statements from the service's own SQL fragments and passes them in),
 * and the service's JSON shapes; no authentication, validation, rate limit or
 * Redis. Reads one JSON argument:
 *   { databaseUrl, poolSize, userId, me, live, sendScope, eventType, eventDelayMs, defaultLimit,
 *     sql: { contactsPage, contactsCount, findRecipient, thread, sendToContact } }
 * and prints `{"port": <port>}` on stdout once listening. Stops on SIGTERM.
 */
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- plain node script */
const { Buffer } = require('node:buffer');
const { createHash, randomBytes } = require('node:crypto');
const Fastify = require('fastify');
const { Pool } = require('pg');

const config = JSON.parse(process.argv[2]);
const { sql, userId } = config;
const pool = new Pool({ connectionString: config.databaseUrl, max: config.poolSize, connectionTimeoutMillis: 5000 });

/** `<prefix>_<22 base62 chars>`, as src/common/ids.ts draws them. */
const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
function newId(prefix) {
  let body = '';
  while (body.length < 22) for (const byte of randomBytes(32)) if (byte < 248 && body.length < 22) body += ALPHABET[byte % 62];
  return `${prefix}_${body}`;
}

/** The hex SHA-256 of the request's canonical JSON (keys sorted), as src/common/idempotency/idempotency-key.ts hashes it. */
const requestHash = (request) =>
  createHash('sha256')
    .update(
      `{${Object.keys(request)
        .sort()
        .map((k) => `${JSON.stringify(k)}:${JSON.stringify(request[k])}`)
        .join(',')}}`,
    )
    .digest('hex');

const iso = (value) => (value === null ? null : value.toISOString());
const notFound = (reply, detail) => reply.code(404).send({ title: 'Not Found', status: 404, detail });
const pageLimit = (raw) => (raw === undefined ? config.defaultLimit : Number(raw));

const app = Fastify({ logger: false });

app.get('/v1/me', async () => config.me);
app.get('/health/live', async () => config.live);

/** ContactsService.list: ContactsRepository.page's one prepared statement (the page with the total); toContactDto. */
app.get('/v1/contacts', async (request) => {
  const limit = pageLimit(request.query.limit);
  const offset = request.query.offset === undefined ? 0 : Number(request.query.offset);
  const { rows } = await pool.query({ name: 'contacts_page', text: sql.contactsPage, values: [userId, limit, offset] });
  let total = rows.length > 0 ? rows[0].total : 0;
  if (rows.length === 0 && offset > 0)
    total = (await pool.query({ name: 'contacts_count', text: sql.contactsCount, values: [userId] })).rows[0].total;
  return {
    contacts: rows.map((row) => ({
      id: row.id,
      name: row.name,
      email: row.email,
      relationship_score: row.relationship_score,
      last_interaction: iso(row.last_interaction),
      connected: row.connected,
      created_at: iso(row.created_at),
    })),
    total,
    limit,
    offset,
  };
});

/** MessagesService.history with a contact: the recipient lookup (scopeOf), then the thread page of limit + 1; toThreadMessage. */
app.get('/v1/messages', async (request, reply) => {
  const limit = pageLimit(request.query.limit);
  const withId = request.query.with;
  let before = null;
  if (request.query.cursor !== undefined) {
    const [at, id] = Buffer.from(request.query.cursor, 'base64url').toString('utf8').split(' ');
    before = { at, id };
  }
  const contact = (await pool.query(sql.findRecipient, [withId, userId])).rows[0];
  if (!contact) return notFound(reply, `No contact or group ${withId}`);
  const linked = contact.linked_user_id;
  // Prepared, as MessagesRepository.thread runs it.
  const { rows } = await pool.query({
    name: 'messages_thread',
    text: sql.thread,
    values: [
      userId,
      'contact',
      withId,
      linked,
      before?.at ?? null,
      before?.id ?? null,
      limit + 1,
      linked === null ? null : 'contact',
      null,
      linked === null ? null : withId,
    ],
  });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    messages: page.map((row) => ({
      id: row.id,
      direction: row.direction,
      sender_contact_id: row.sender_contact_id,
      recipient_id: row.recipient_id,
      recipient_kind: row.recipient_kind,
      group_id: row.group_id,
      type: row.type,
      content: row.content,
      status: row.status,
      delivered_at: iso(row.delivered_at),
      read_at: iso(row.read_at),
      waiting_recipients: row.waiting_recipients,
      created_at: iso(row.created_at),
    })),
    next_cursor: rows.length > limit ? Buffer.from(`${last.position_at} ${last.id}`).toString('base64url') : null,
  };
});

/**
 * MessagesService.send to a contact alone (MessagesRepository.sendToContact): one prepared statement, its own
 * transaction, writing the Idempotency-Key row (with its response), the message, its recipient row, the contact's
 * interaction weight and the held `message.created` event.
 */
app.post('/v1/messages', async (request, reply) => {
  const body = request.body;
  const send = { recipient_id: body.recipient_id, content: body.content, type: body.type ?? 'text' };
  const key = request.headers['idempotency-key'];
  const id = newId('msg');
  const { rows } = await pool.query({
    name: 'messages.send_to_contact',
    text: sql.sendToContact,
    values: [
      id,
      userId,
      send.recipient_id,
      send.type,
      send.content,
      key ?? null,
      key === undefined ? null : requestHash(send),
      key === undefined ? null : config.sendScope,
      newId('evt'),
      config.eventDelayMs,
      config.eventType,
    ],
  });
  const [row] = rows;
  if (!row) return notFound(reply, `No contact or group ${send.recipient_id} (or Idempotency-Key taken)`);
  return reply.code(201).send({ id, status: row.linked_user_id === null ? 'waiting' : 'sent', created_at: row.created_at });
});

process.once('SIGTERM', () => {
  app
    .close()
    .then(() => pool.end())
    .then(
      () => process.exit(0),
      () => process.exit(1),
    );
});

app.listen({ port: 0, host: '127.0.0.1' }).then(
  () => process.stdout.write(`${JSON.stringify({ port: app.server.address().port })}\n`),
  (error) => {
    console.error(error);
    process.exit(1);
  },
);
