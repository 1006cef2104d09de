import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, QueryFailedError, Repository } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';
import { connectedSql, linkedUserSql } from './contact-links';
import { ContactEntity } from './entities/contact.entity';
import { recordInteractionSetSql, relationshipScoreSql } from './relationship-score';

/** A contact as its owner sees it (the link to a service user shows only as `connected`). */
export interface Contact {
  id: string;
  name: string;
  email: string | null;
  connected: boolean;
  relationshipScore: number;
  lastInteraction: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/** A contact as a message recipient: who gets the `message_recipients` row. */
export interface Recipient {
  contactId: string;
  /** The service user behind the contact, if any: internal, never shown to the owner. */
  linkedUserId: string | null;
}

/** A person the user and they have both added: presence and typing are shared between them. */
export interface MutualLink {
  userId: string;
  /** The user's contact for them. */
  contactId: string;
  /** Their contact for the user. */
  theirContactId: string;
}

interface ContactRow {
  id: string;
  name: string;
  email: string | null;
  connected: boolean;
  relationship_score: number;
  last_interaction: Date | null;
  created_at: Date;
  updated_at: Date;
}

const CONTACT_COLUMNS = `c.id, c.name, c.email, ${connectedSql('c')} AS connected, c.last_interaction, c.created_at, c.updated_at,
  ${relationshipScoreSql('c')} AS relationship_score`;

/** The contacts page with the owner's total (exported for the HTTP bench's bare baseline, which runs the same SQL). */
export const CONTACTS_PAGE_SQL = `SELECT ${CONTACT_COLUMNS}, (SELECT count(*) FROM contacts t WHERE t.user_id = $1)::int AS total
    FROM contacts c WHERE c.user_id = $1
   ORDER BY relationship_score DESC, lower(c.name), c.name, c.id
   LIMIT $2 OFFSET $3`;
/** A contact of the owner as a message recipient (`$1` the contact, `$2` the owner). */
export const FIND_RECIPIENT_SQL = `SELECT c.id, ${linkedUserSql('c')} AS linked_user_id FROM contacts c WHERE c.id = $1 AND c.user_id = $2`;
export const CONTACTS_COUNT_SQL = `SELECT count(*)::int AS total FROM contacts WHERE user_id = $1`;

function toContact(row: ContactRow): Contact {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    connected: row.connected,
    relationshipScore: row.relationship_score,
    lastInteraction: row.last_interaction,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The unique index on (user_id, lower(email)) refused the row. */
function isDuplicateEmail(error: unknown): boolean {
  return (
    error instanceof QueryFailedError &&
    (error.driverError as { constraint?: string } | undefined)?.constraint === 'contacts_user_email_idx'
  );
}

/** The `contacts` table: users' address books. */
@Injectable()
export class ContactsRepository extends SqlRepository {
  constructor(
    @InjectDataSource() dataSource: DataSource,
    @InjectRepository(ContactEntity) private readonly contacts: Repository<ContactEntity>,
  ) {
    super(dataSource);
  }

  /** False when the owner already has a contact with this email (the unique index refused it). */
  async insert(contact: { id: string; userId: string; name: string; email: string | null }): Promise<boolean> {
    const entity = this.contacts.create(contact);
    try {
      await this.contacts.insert(entity);
      return true;
    } catch (error) {
      if (isDuplicateEmail(error)) return false;
      throw error;
    }
  }

  /** A page of the owner's contacts by relationship score, and how many they have (`GET /v1/contacts`). */
  async page(userId: string, limit: number, offset: number): Promise<{ contacts: Contact[]; total: number }> {
    const { rows, total } = await this.pageWithTotal<ContactRow & { total: number }>(
      'contacts_page',
      CONTACTS_PAGE_SQL,
      CONTACTS_COUNT_SQL,
      userId,
      limit,
      offset,
    );
    return { contacts: rows.map(toContact), total };
  }

  async findForUser(userId: string, contactId: string): Promise<Contact | null> {
    const row = await this.first<ContactRow>(`SELECT ${CONTACT_COLUMNS} FROM contacts c WHERE c.id = $1 AND c.user_id = $2`, [
      contactId,
      userId,
    ]);
    return row ? toContact(row) : null;
  }

  /** Every contact of the user, oldest first (the personal data export). */
  async allForUser(userId: string, tx?: Tx): Promise<Contact[]> {
    const rows = await this.rows<ContactRow>(
      `SELECT ${CONTACT_COLUMNS} FROM contacts c WHERE c.user_id = $1 ORDER BY c.created_at, c.id`,
      [userId],
      tx,
    );
    return rows.map(toContact);
  }

  async hasEmail(userId: string, email: string, tx?: Tx): Promise<boolean> {
    const existing = await this.rows<unknown>(
      `SELECT 1 FROM contacts WHERE user_id = $1 AND lower(email) = lower($2)`,
      [userId, email],
      tx,
    );
    return existing.length > 0;
  }

  /** The user's contact, locked FOR UPDATE until the transaction ends; null when it is not theirs. */
  findLocked(tx: Tx, userId: string, contactId: string): Promise<ContactEntity | null> {
    return tx.findOne(ContactEntity, { where: { id: contactId, userId }, lock: { mode: 'pessimistic_write' } });
  }

  /** Saves a contact read with `findLocked`; false when its email now duplicates another of the owner's contacts. */
  async save(tx: Tx, entity: ContactEntity): Promise<boolean> {
    try {
      await tx.save(entity);
      return true;
    } catch (error) {
      if (isDuplicateEmail(error)) return false;
      throw error;
    }
  }

  async delete(tx: Tx, userId: string, contactId: string): Promise<void> {
    await tx.delete(ContactEntity, { id: contactId, userId });
  }

  /**
   * The pending-contact rule (docs/decisions.md, issue 23): an address corrected to one a user already holds
   * hands that user what waited for the contact; messages that reached someone stay theirs.
   * Writes `message_recipients` (the messages area's table) inside the contact's update: the messages area
   * depends on contacts, so it cannot be asked from here without a module cycle.
   */
  async handPendingMessagesToLinkedUser(tx: Tx, contactId: string): Promise<void> {
    await this.execute(
      `UPDATE message_recipients r SET recipient_user_id = l.id
             FROM (SELECT ${linkedUserSql('c')} AS id FROM contacts c WHERE c.id = $1) l
            WHERE r.contact_id = $1 AND r.recipient_user_id IS NULL AND r.recipient_erased_at IS NULL AND l.id IS NOT NULL`,
      [contactId],
      tx,
    );
  }

  async findRecipient(userId: string, contactId: string, tx?: Tx): Promise<Recipient | null> {
    const row = await this.first<{ id: string; linked_user_id: string | null }>(FIND_RECIPIENT_SQL, [contactId, userId], tx);
    return row ? { contactId: row.id, linkedUserId: row.linked_user_id } : null;
  }

  /** The contact each of `ownerIds` has for user `otherUserId` (the one linked to them), by owner. */
  async contactIdsFor(ownerIds: string[], otherUserId: string, tx?: Tx): Promise<Map<string, string>> {
    const rows = await this.rows<{ user_id: string; id: string }>(
      `SELECT k.user_id, k.id
         FROM users ku JOIN contacts k ON k.user_id = ANY($1::text[]) AND k.email IS NOT NULL AND lower(k.email) = ku.verified_email
        WHERE ku.id = $2 AND k.user_id <> ku.id`,
      [ownerIds, otherUserId],
      tx,
    );
    return new Map(rows.map((row) => [row.user_id, row.id]));
  }

  /** The ids among `contactIds` that are the user's, key-share locked until the transaction ends. */
  async ownedIdsKeyShareLocked(tx: Tx, userId: string, contactIds: string[]): Promise<string[]> {
    const rows = await this.rows<{ id: string }>(
      `SELECT id FROM contacts WHERE user_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR KEY SHARE`,
      [userId, contactIds],
      tx,
    );
    return rows.map((row) => row.id);
  }

  async mutualLinks(userId: string): Promise<MutualLink[]> {
    const rows = await this.rows<{ user_id: string; contact_id: string; their_contact_id: string }>(
      `SELECT lu.id AS user_id, mine.id AS contact_id, back.id AS their_contact_id
         FROM users me
         JOIN contacts mine ON mine.user_id = me.id AND mine.email IS NOT NULL
         JOIN users lu ON lu.verified_email = lower(mine.email) AND lu.id <> me.id
         JOIN contacts back ON back.user_id = lu.id AND back.email IS NOT NULL AND lower(back.email) = me.verified_email
        WHERE me.id = $1
        ORDER BY mine.id`,
      [userId],
    );
    return rows.map((row) => ({ userId: row.user_id, contactId: row.contact_id, theirContactId: row.their_contact_id }));
  }

  /**
   * One message to each contact: the weight decays to `at` and gains 1, and `last_interaction` moves to `at`.
   * With several contacts (a group send) the rows are locked in id order first, so concurrent group sends
   * cannot deadlock; one row needs no order.
   */
  async recordInteraction(tx: Tx, userId: string, contactIds: string[], at: Date): Promise<void> {
    if (contactIds.length > 1)
      await this.execute(
        `SELECT id FROM contacts WHERE user_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR NO KEY UPDATE`,
        [userId, contactIds],
        tx,
      );
    await this.execute(
      `UPDATE contacts AS c
          SET ${recordInteractionSetSql('c', '$3::timestamptz')}
        WHERE c.user_id = $1 AND c.id = ANY($2::text[])`,
      [userId, contactIds, at],
      tx,
    );
  }

  /** Moves `last_interaction` of each contact to its latest `at`, set-based; rows locked in id order. */
  async recordReceived(tx: Tx, received: Array<{ contactId: string; at: string }>): Promise<void> {
    await this.execute(
      `WITH latest AS (
         SELECT contact_id, max(at) AS at FROM unnest($1::text[], $2::timestamptz[]) AS r(contact_id, at) GROUP BY contact_id
       ), locked AS (
         SELECT c.id FROM contacts c JOIN latest l ON l.contact_id = c.id ORDER BY c.id FOR NO KEY UPDATE OF c
       )
       UPDATE contacts c SET last_interaction = GREATEST(c.last_interaction, l.at)
         FROM latest l, locked k
        WHERE c.id = l.contact_id AND k.id = c.id`,
      [received.map((r) => r.contactId), received.map((r) => r.at)],
      tx,
    );
  }
}
