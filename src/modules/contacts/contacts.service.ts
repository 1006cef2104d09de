import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { isId, newId } from '../../common/ids';
import { Contact, ContactsRepository, MutualLink, Recipient } from './contacts.repository';
import { ContactDto, ContactListDto, CreateContactDto, UpdateContactDto } from './dto/contact.dto';
import { Page } from './dto/page-query.dto';
import { GroupsRepository } from './groups.repository';

export type { MutualLink, Recipient } from './contacts.repository';

export function toContactDto(contact: Contact): ContactDto {
  return {
    id: contact.id,
    name: contact.name,
    email: contact.email,
    relationship_score: contact.relationshipScore,
    last_interaction: contact.lastInteraction?.toISOString() ?? null,
    connected: contact.connected,
    created_at: contact.createdAt.toISOString(),
  };
}

const notFound = (id: string) => new ApiError('NOT_FOUND', `No contact ${id}`);

/**
 * The user's address book. Contacts are private to their owner: another
 * user's contact id answers NOT_FOUND exactly like an unknown one.
 */
@Injectable()
export class ContactsService {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly contacts: ContactsRepository,
    private readonly groups: GroupsRepository,
  ) {}

  async create(userId: string, input: CreateContactDto): Promise<ContactDto> {
    const email = input.email ?? null;
    if (email !== null) await this.refuseDuplicateEmail(userId, email);
    const id = newId('con');
    if (!(await this.contacts.insert({ id, userId, name: input.name, email }))) throw duplicateEmail(email!);
    return this.get(userId, id);
  }

  async list(userId: string, page: Page): Promise<ContactListDto> {
    const { contacts, total } = await this.contacts.page(userId, page.limit, page.offset);
    return { contacts: contacts.map(toContactDto), total, limit: page.limit, offset: page.offset };
  }

  async get(userId: string, contactId: string): Promise<ContactDto> {
    const contact = isId(contactId, 'con') ? await this.contacts.findForUser(userId, contactId) : null;
    if (!contact) throw notFound(contactId);
    return toContactDto(contact);
  }

  /** Renames and/or changes the email; the link follows the email, `null` removes both. */
  async update(userId: string, contactId: string, patch: UpdateContactDto): Promise<ContactDto> {
    if (!isId(contactId, 'con')) throw notFound(contactId);
    const changed = await this.dataSource.transaction(async (manager) => {
      const entity = await this.contacts.findLocked(manager, userId, contactId);
      if (!entity) throw notFound(contactId);
      if (patch.name !== undefined) entity.name = patch.name;
      if (patch.email !== undefined) {
        const email = patch.email;
        if (email !== null && email.toLowerCase() !== entity.email?.toLowerCase()) {
          await this.refuseDuplicateEmail(userId, email, manager);
        }
        entity.email = email;
      }
      if (!(await this.contacts.save(manager, entity))) throw duplicateEmail(entity.email!);
      // The pending-contact rule (docs/decisions.md, issue 23): an address corrected to one a user already holds
      // hands that user what waited for the contact; messages that reached someone stay theirs.
      if (patch.email) await this.contacts.handPendingMessagesToLinkedUser(manager, entity.id);
      return entity.id;
    });
    return this.get(userId, changed);
  }

  /** Deletes the contact; it leaves its groups, and messages already sent stay in the sender's history. */
  async remove(userId: string, contactId: string): Promise<void> {
    if (!isId(contactId, 'con')) throw notFound(contactId);
    await this.dataSource.transaction(async (manager) => {
      const entity = await this.contacts.findLocked(manager, userId, contactId);
      if (!entity) throw notFound(contactId);
      // The groups it leaves change membership, so they count as updated.
      await this.groups.touchHolding(manager, contactId);
      await this.contacts.delete(manager, userId, contactId);
    });
  }

  /** The contact as a recipient, or null when it is not one of the user's contacts. */
  async findRecipient(userId: string, contactId: string, manager?: EntityManager): Promise<Recipient | null> {
    if (!isId(contactId, 'con')) return null;
    return this.contacts.findRecipient(userId, contactId, manager);
  }

  /**
   * The contact each of `ownerIds` has for user `otherUserId` (the one linked
   * to them), by owner; owners without one are absent. How a frame or message
   * about `otherUserId` names them to each of those owners.
   */
  async contactIdsFor(ownerIds: string[], otherUserId: string, manager?: EntityManager): Promise<Map<string, string>> {
    if (ownerIds.length === 0) return new Map();
    return this.contacts.contactIdsFor(ownerIds, otherUserId, manager);
  }

  /**
   * The ids among `contactIds` that are not the user's contacts. The others are
   * key-share locked until the caller's transaction ends, so they cannot be
   * deleted between this check and an insert that references them.
   */
  async foreignIds(manager: EntityManager, userId: string, contactIds: string[]): Promise<string[]> {
    const candidates = contactIds.filter((id) => isId(id, 'con'));
    const owned = candidates.length === 0 ? [] : await this.contacts.ownedIdsKeyShareLocked(manager, userId, candidates);
    const ownedIds = new Set(owned);
    return contactIds.filter((id) => !ownedIds.has(id));
  }

  /**
   * Users linked both ways with this user: the user has a contact linked to
   * them and they have a contact linked to the user. Presence is shared only
   * between them, so adding someone's email does not reveal when they are online.
   */
  mutualLinks(userId: string): Promise<MutualLink[]> {
    return this.contacts.mutualLinks(userId);
  }

  /**
   * Counts one message to each contact (inside the send transaction): the
   * weight decays to `at` and gains 1, and `last_interaction` moves to `at`.
   */
  async recordInteraction(manager: EntityManager, userId: string, contactIds: string[], at: Date): Promise<void> {
    if (contactIds.length === 0) return;
    await this.contacts.recordInteraction(manager, userId, contactIds, at);
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
    await this.contacts.recordReceived(manager, received);
  }

  /** Every contact of the user, for the personal data export. */
  async exportFor(userId: string, manager: EntityManager): Promise<Array<ContactDto & { updated_at: string }>> {
    const contacts = await this.contacts.allForUser(userId, manager);
    return contacts.map((contact) => ({ ...toContactDto(contact), updated_at: contact.updatedAt.toISOString() }));
  }

  private async refuseDuplicateEmail(userId: string, email: string, manager?: EntityManager): Promise<void> {
    if (await this.contacts.hasEmail(userId, email, manager)) throw duplicateEmail(email);
  }
}

function duplicateEmail(email: string): ApiError {
  return new ApiError('BAD_REQUEST', `email ${email} already belongs to another of your contacts`);
}
