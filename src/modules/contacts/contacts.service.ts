import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, QueryFailedError, Repository } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { isId, newId } from '../../common/ids';
import { connectedSql, linkedUserSql } from './contact-links';
import { ContactDto, ContactListDto, CreateContactDto, UpdateContactDto } from './dto/contact.dto';
import { Page } from './dto/page-query.dto';
import { ContactEntity } from './entities/contact.entity';
import { decayedWeightSql, relationshipScoreSql } from './relationship-score';

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

export function toContactDto(row: ContactRow): ContactDto {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    relationship_score: row.relationship_score,
    last_interaction: row.last_interaction?.toISOString() ?? null,
    connected: row.connected,
    created_at: row.created_at.toISOString(),
  };
}

const notFound = (id: string) => new ApiError('NOT_FOUND', `No contact ${id}`);

function isDuplicateEmail(error: unknown): boolean {
  return (
    error instanceof QueryFailedError &&
    (error.driverError as { constraint?: string } | undefined)?.constraint === 'contacts_user_email_idx'
  );
}

/**
 * The user's address book. Contacts are private to their owner: another
 * user's contact id answers NOT_FOUND exactly like an unknown one.
 */
@Injectable()
export class ContactsService {
  constructor(@InjectRepository(ContactEntity) private readonly contacts: Repository<ContactEntity>) {}

  async create(userId: string, input: CreateContactDto): Promise<ContactDto> {
    const email = input.email ?? null;
    if (email !== null) await this.refuseDuplicateEmail(userId, email);
    const entity = this.contacts.create({ id: newId('con'), userId, name: input.name, email });
    try {
      await this.contacts.insert(entity);
    } catch (error) {
      if (isDuplicateEmail(error)) throw duplicateEmail(email!);
      throw error;
    }
    return this.get(userId, entity.id);
  }

  async list(userId: string, page: Page): Promise<ContactListDto> {
    const [rows, [{ total }]] = await Promise.all([
      this.contacts.query<ContactRow[]>(
        `SELECT ${CONTACT_COLUMNS} FROM contacts c WHERE c.user_id = $1
         ORDER BY relationship_score DESC, lower(c.name), c.name, c.id
         LIMIT $2 OFFSET $3`,
        [userId, page.limit, page.offset],
      ),
      this.contacts.query<Array<{ total: number }>>(`SELECT count(*)::int AS total FROM contacts WHERE user_id = $1`, [userId]),
    ]);
    return { contacts: rows.map(toContactDto), total, limit: page.limit, offset: page.offset };
  }

  async get(userId: string, contactId: string): Promise<ContactDto> {
    const row = await this.findRow(userId, contactId);
    if (!row) throw notFound(contactId);
    return toContactDto(row);
  }

  /** Renames and/or changes the email; the link follows the email, `null` removes both. */
  async update(userId: string, contactId: string, patch: UpdateContactDto): Promise<ContactDto> {
    if (!isId(contactId, 'con')) throw notFound(contactId);
    const changed = await this.contacts.manager.transaction(async (manager) => {
      const entity = await manager.findOne(ContactEntity, { where: { id: contactId, userId }, lock: { mode: 'pessimistic_write' } });
      if (!entity) throw notFound(contactId);
      if (patch.name !== undefined) entity.name = patch.name;
      if (patch.email !== undefined) {
        const email = patch.email;
        if (email !== null && email.toLowerCase() !== entity.email?.toLowerCase()) {
          await this.refuseDuplicateEmail(userId, email, manager);
        }
        entity.email = email;
      }
      try {
        await manager.save(entity);
      } catch (error) {
        if (isDuplicateEmail(error)) throw duplicateEmail(entity.email!);
        throw error;
      }
      // The pending-contact rule (docs/decisions.md, issue 23): an address corrected to one a user already holds
      // hands that user what waited for the contact; messages that reached someone stay theirs.
      if (patch.email) {
        await manager.query(
          `UPDATE message_recipients r SET recipient_user_id = l.id
             FROM (SELECT ${linkedUserSql('c')} AS id FROM contacts c WHERE c.id = $1) l
            WHERE r.contact_id = $1 AND r.recipient_user_id IS NULL AND l.id IS NOT NULL`,
          [entity.id],
        );
      }
      return entity.id;
    });
    return this.get(userId, changed);
  }

  /** Deletes the contact; it leaves its groups, and messages already sent stay in the sender's history. */
  async remove(userId: string, contactId: string): Promise<void> {
    if (!isId(contactId, 'con')) throw notFound(contactId);
    await this.contacts.manager.transaction(async (manager) => {
      const entity = await manager.findOne(ContactEntity, { where: { id: contactId, userId }, lock: { mode: 'pessimistic_write' } });
      if (!entity) throw notFound(contactId);
      // The groups it leaves change membership, so they count as updated.
      await manager.query(`UPDATE groups SET updated_at = now() WHERE id IN (SELECT group_id FROM group_members WHERE contact_id = $1)`, [
        contactId,
      ]);
      await manager.delete(ContactEntity, { id: contactId, userId });
    });
  }

  /** The contact as a recipient, or null when it is not one of the user's contacts. */
  async findRecipient(userId: string, contactId: string, manager: EntityManager = this.contacts.manager): Promise<Recipient | null> {
    if (!isId(contactId, 'con')) return null;
    const rows: Array<{ id: string; linked_user_id: string | null }> = await manager.query(
      `SELECT c.id, ${linkedUserSql('c')} AS linked_user_id FROM contacts c WHERE c.id = $1 AND c.user_id = $2`,
      [contactId, userId],
    );
    return rows.length > 0 ? { contactId: rows[0].id, linkedUserId: rows[0].linked_user_id } : null;
  }

  /**
   * The contact each of `ownerIds` has for user `otherUserId` (the one linked
   * to them), by owner; owners without one are absent. How a frame or message
   * about `otherUserId` names them to each of those owners.
   */
  async contactIdsFor(
    ownerIds: string[],
    otherUserId: string,
    manager: EntityManager = this.contacts.manager,
  ): Promise<Map<string, string>> {
    if (ownerIds.length === 0) return new Map();
    const rows: Array<{ user_id: string; id: string }> = await manager.query(
      `SELECT k.user_id, k.id
         FROM users ku JOIN contacts k ON k.user_id = ANY($1::text[]) AND k.email IS NOT NULL AND lower(k.email) = ku.verified_email
        WHERE ku.id = $2 AND k.user_id <> ku.id`,
      [ownerIds, otherUserId],
    );
    return new Map(rows.map((row) => [row.user_id, row.id]));
  }

  /**
   * The ids among `contactIds` that are not the user's contacts. The others are
   * key-share locked until the caller's transaction ends, so they cannot be
   * deleted between this check and an insert that references them.
   */
  async foreignIds(manager: EntityManager, userId: string, contactIds: string[]): Promise<string[]> {
    const candidates = contactIds.filter((id) => isId(id, 'con'));
    const owned: Array<{ id: string }> =
      candidates.length === 0
        ? []
        : await manager.query(`SELECT id FROM contacts WHERE user_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR KEY SHARE`, [
            userId,
            candidates,
          ]);
    const ownedIds = new Set(owned.map((row) => row.id));
    return contactIds.filter((id) => !ownedIds.has(id));
  }

  /**
   * Users linked both ways with this user: the user has a contact linked to
   * them and they have a contact linked to the user. Presence is shared only
   * between them, so adding someone's email does not reveal when they are online.
   */
  async mutualLinks(userId: string): Promise<MutualLink[]> {
    const rows: Array<{ user_id: string; contact_id: string; their_contact_id: string }> = await this.contacts.query(
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
   * Counts one message to each contact (inside the send transaction): the
   * weight decays to `at` and gains 1, and `last_interaction` moves to `at`.
   * With several contacts (a group send) the rows are locked in id order
   * first, so concurrent group sends cannot deadlock; one row needs no order.
   */
  async recordInteraction(manager: EntityManager, userId: string, contactIds: string[], at: Date): Promise<void> {
    if (contactIds.length === 0) return;
    if (contactIds.length > 1)
      await manager.query(`SELECT id FROM contacts WHERE user_id = $1 AND id = ANY($2::text[]) ORDER BY id FOR NO KEY UPDATE`, [
        userId,
        contactIds,
      ]);
    await manager.query(
      `UPDATE contacts AS c
          SET interaction_weight = ${decayedWeightSql('c', '$3::timestamptz')} + 1,
              weight_at = GREATEST(c.weight_at, $3::timestamptz),
              last_interaction = GREATEST(c.last_interaction, $3::timestamptz)
        WHERE c.user_id = $1 AND c.id = ANY($2::text[])`,
      [userId, contactIds, at],
    );
  }

  /**
   * Messages received move `last_interaction` of the receiver's contact for
   * the sender too (the sender's side moves in the send transaction). Called
   * by the durable message path in the worker, set-based per batch; rows are
   * locked in id order, as every multi-row update of contacts does, so it
   * cannot deadlock with sends.
   */
  async recordReceived(manager: EntityManager, received: Array<{ contactId: string; at: string }>): Promise<void> {
    if (received.length === 0) return;
    await manager.query(
      `WITH latest AS (
         SELECT contact_id, max(at) AS at FROM unnest($1::text[], $2::timestamptz[]) AS r(contact_id, at) GROUP BY contact_id
       ), locked AS (
         SELECT c.id FROM contacts c JOIN latest l ON l.contact_id = c.id ORDER BY c.id FOR NO KEY UPDATE OF c
       )
       UPDATE contacts c SET last_interaction = GREATEST(c.last_interaction, l.at)
         FROM latest l, locked k
        WHERE c.id = l.contact_id AND k.id = c.id`,
      [received.map((r) => r.contactId), received.map((r) => r.at)],
    );
  }

  /** Every contact of the user, for the personal data export. */
  async exportFor(userId: string, manager: EntityManager): Promise<Array<ContactDto & { updated_at: string }>> {
    const rows: ContactRow[] = await manager.query(
      `SELECT ${CONTACT_COLUMNS} FROM contacts c WHERE c.user_id = $1 ORDER BY c.created_at, c.id`,
      [userId],
    );
    return rows.map((row) => ({ ...toContactDto(row), updated_at: row.updated_at.toISOString() }));
  }

  private async findRow(userId: string, contactId: string): Promise<ContactRow | null> {
    if (!isId(contactId, 'con')) return null;
    const rows: ContactRow[] = await this.contacts.query(`SELECT ${CONTACT_COLUMNS} FROM contacts c WHERE c.id = $1 AND c.user_id = $2`, [
      contactId,
      userId,
    ]);
    return rows[0] ?? null;
  }

  private async refuseDuplicateEmail(userId: string, email: string, manager: EntityManager = this.contacts.manager): Promise<void> {
    const existing: unknown[] = await manager.query(`SELECT 1 FROM contacts WHERE user_id = $1 AND lower(email) = lower($2)`, [
      userId,
      email,
    ]);
    if (existing.length > 0) throw duplicateEmail(email);
  }
}

function duplicateEmail(email: string): ApiError {
  return new ApiError('BAD_REQUEST', `email ${email} already belongs to another of your contacts`);
}
