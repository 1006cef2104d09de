import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { isId, newId } from '../../common/ids';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { GatewayBus } from '../../infra/realtime/gateway-bus';
import { BusEvent, userChannel } from '../../infra/realtime/gateway-channels';
import { linkedUserSql } from './contact-links';
import { ContactsService, Recipient } from './contacts.service';
import { CreateGroupDto, GroupDto, GroupListDto, UpdateGroupDto } from './dto/group.dto';
import { Page } from './dto/page-query.dto';
import { GroupEntity } from './entities/group.entity';

interface GroupRow {
  id: string;
  name: string;
  member_ids: string[];
  created_at: Date;
  updated_at: Date;
}

const GROUP_COLUMNS = `g.id, g.name, g.created_at, g.updated_at,
  COALESCE((SELECT array_agg(m.contact_id ORDER BY m.added_at, m.contact_id) FROM group_members m WHERE m.group_id = g.id), '{}') AS member_ids`;

function toGroupDto(row: GroupRow): GroupDto {
  return {
    id: row.id,
    name: row.name,
    member_ids: row.member_ids,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

const notFound = (id: string) => new ApiError('NOT_FOUND', `No group ${id}`);

/** Gateway event telling a group's members (and its owner's sessions) its new name and size. */
export const GROUP_UPDATED = 'group.updated';

/** One of someone else's groups, as a user who is (or was) reached by it sees it. */
export interface GroupAsMember {
  id: string;
  name: string;
  /** Internal: whose group it is (the sender of its messages). */
  ownerId: string;
  /** Whether one of the group's contacts is linked to the user now. */
  member: boolean;
}

/** The users linked to a group's member contacts (its members on the service), as SQL; `$1` is the group id. */
const LINKED_MEMBERS_SQL = `SELECT DISTINCT lu.id FROM group_members m JOIN contacts c ON c.id = m.contact_id
  JOIN users lu ON c.email IS NOT NULL AND lu.verified_email = lower(c.email) AND lu.id <> c.user_id
 WHERE m.group_id = $1`;

/** Named sets of the owner's contacts. A group may only hold the owner's own contacts. */
@Injectable()
export class GroupsService {
  private readonly logger = new Logger(GroupsService.name);

  constructor(
    @InjectRepository(GroupEntity) private readonly groups: Repository<GroupEntity>,
    private readonly contacts: ContactsService,
    private readonly bus: GatewayBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(userId: string, input: CreateGroupDto): Promise<GroupDto> {
    const id = newId('grp');
    const audience = await this.groups.manager.transaction(async (manager) => {
      const members = input.member_ids ?? [];
      await this.refuseForeignMembers(manager, userId, members);
      await manager.insert(GroupEntity, { id, userId, name: input.name });
      await this.addMembers(manager, id, members);
      return this.linkedMembers(manager, id);
    });
    const group = await this.get(userId, id);
    if (audience.length > 0) this.announce(userId, audience, group);
    return group;
  }

  async list(userId: string, page: Page): Promise<GroupListDto> {
    const [rows, [{ total }]] = await Promise.all([
      this.groups.query<GroupRow[]>(
        `SELECT ${GROUP_COLUMNS} FROM groups g WHERE g.user_id = $1 ORDER BY lower(g.name), g.name, g.id LIMIT $2 OFFSET $3`,
        [userId, page.limit, page.offset],
      ),
      this.groups.query<Array<{ total: number }>>(`SELECT count(*)::int AS total FROM groups WHERE user_id = $1`, [userId]),
    ]);
    return { groups: rows.map(toGroupDto), total, limit: page.limit, offset: page.offset };
  }

  async get(userId: string, groupId: string): Promise<GroupDto> {
    if (!isId(groupId, 'grp')) throw notFound(groupId);
    const rows = await this.groups.query<GroupRow[]>(`SELECT ${GROUP_COLUMNS} FROM groups g WHERE g.id = $1 AND g.user_id = $2`, [
      groupId,
      userId,
    ]);
    if (rows.length === 0) throw notFound(groupId);
    return toGroupDto(rows[0]);
  }

  /** Renames and/or replaces the membership; members that stay keep their place. */
  async update(userId: string, groupId: string, patch: UpdateGroupDto): Promise<GroupDto> {
    if (!isId(groupId, 'grp')) throw notFound(groupId);
    const audience = await this.groups.manager.transaction(async (manager) => {
      const group = await manager.findOne(GroupEntity, { where: { id: groupId, userId }, lock: { mode: 'pessimistic_write' } });
      if (!group) throw notFound(groupId);
      if (patch.name === undefined && patch.member_ids === undefined) return null;
      // Members removed by this change are told too: their client stops showing them in the group.
      const before = await this.linkedMembers(manager, groupId);
      if (patch.member_ids !== undefined) {
        await this.refuseForeignMembers(manager, userId, patch.member_ids);
        await manager.query(`DELETE FROM group_members WHERE group_id = $1 AND NOT (contact_id = ANY($2::text[]))`, [
          groupId,
          patch.member_ids,
        ]);
        await this.addMembers(manager, groupId, patch.member_ids);
      }
      if (patch.name !== undefined) group.name = patch.name;
      // Touch updated_at even when only the membership changed.
      await manager.query(`UPDATE groups SET name = $2, updated_at = now() WHERE id = $1`, [groupId, group.name]);
      return [...new Set([...before, ...(await this.linkedMembers(manager, groupId))])];
    });
    const group = await this.get(userId, groupId);
    if (audience) this.announce(userId, audience, group);
    return group;
  }

  /** Deletes the group; its member contacts stay. */
  async remove(userId: string, groupId: string): Promise<void> {
    if (!isId(groupId, 'grp')) throw notFound(groupId);
    const result = await this.groups.delete({ id: groupId, userId });
    if (!result.affected) throw notFound(groupId);
  }

  async owns(userId: string, groupId: string): Promise<boolean> {
    return isId(groupId, 'grp') && (await this.groups.exists({ where: { id: groupId, userId } }));
  }

  /** The members of one of the user's groups as recipients, or null when the group is not the user's. */
  async findRecipients(userId: string, groupId: string, manager: EntityManager = this.groups.manager): Promise<Recipient[] | null> {
    return (await this.findForSending(userId, groupId, manager))?.recipients ?? null;
  }

  /** One of the user's groups with its name and members as recipients, or null when the group is not the user's. */
  async findForSending(
    userId: string,
    groupId: string,
    manager: EntityManager = this.groups.manager,
  ): Promise<{ name: string; recipients: Recipient[] } | null> {
    if (!isId(groupId, 'grp')) return null;
    const group = await manager.findOne(GroupEntity, { where: { id: groupId, userId } });
    if (!group) return null;
    const rows: Array<{ id: string; linked_user_id: string | null }> = await manager.query(
      `SELECT c.id, ${linkedUserSql('c')} AS linked_user_id FROM group_members m JOIN contacts c ON c.id = m.contact_id
        WHERE m.group_id = $1 ORDER BY m.added_at, c.id`,
      [groupId],
    );
    return { name: group.name, recipients: rows.map((row) => ({ contactId: row.id, linkedUserId: row.linked_user_id })) };
  }

  /**
   * Someone else's group as the user sees it: its name, its owner, and whether
   * the user is a member now (one of its contacts is linked to the user).
   * Null for an unknown id and for the user's own groups.
   */
  async asMember(userId: string, groupId: string): Promise<GroupAsMember | null> {
    if (!isId(groupId, 'grp')) return null;
    const rows: Array<{ id: string; name: string; owner_id: string; member: boolean }> = await this.groups.query(
      `SELECT g.id, g.name, g.user_id AS owner_id,
              EXISTS (SELECT 1 FROM group_members m JOIN contacts c ON c.id = m.contact_id
                       WHERE m.group_id = g.id AND c.email IS NOT NULL
                         AND lower(c.email) = (SELECT u.verified_email FROM users u WHERE u.id = $1)) AS member
         FROM groups g WHERE g.id = $2 AND g.user_id <> $1`,
      [userId, groupId],
    );
    return rows.length === 0 ? null : { id: rows[0].id, name: rows[0].name, ownerId: rows[0].owner_id, member: rows[0].member };
  }

  /** Every group of the user with its member ids, for the personal data export. */
  async exportFor(userId: string, manager: EntityManager): Promise<GroupDto[]> {
    const rows: GroupRow[] = await manager.query(`SELECT ${GROUP_COLUMNS} FROM groups g WHERE g.user_id = $1 ORDER BY g.created_at, g.id`, [
      userId,
    ]);
    return rows.map(toGroupDto);
  }

  private async linkedMembers(manager: EntityManager, groupId: string): Promise<string[]> {
    const rows: Array<{ id: string }> = await manager.query(LINKED_MEMBERS_SQL, [groupId]);
    return rows.map((row) => row.id);
  }

  /**
   * `group.updated` after commit to the members on the service and the
   * owner's own sessions. Best effort, like receipts: a client that missed it
   * reads the group again from `GET /v1/conversations`.
   */
  private announce(ownerId: string, members: string[], group: GroupDto): void {
    const event: BusEvent = { type: GROUP_UPDATED, data: { group_id: group.id, name: group.name, member_count: group.member_ids.length } };
    for (const userId of new Set([ownerId, ...members])) {
      this.bus.publish(userChannel(this.config.redisPrefix, userId), event).catch((error: unknown) => {
        this.logger.warn({ err: error, groupId: group.id }, 'group.updated publish failed');
      });
    }
  }

  private async refuseForeignMembers(manager: EntityManager, userId: string, memberIds: string[]): Promise<void> {
    const foreign = await this.contacts.foreignIds(manager, userId, memberIds);
    if (foreign.length === 1) throw new ApiError('BAD_REQUEST', `member_ids: ${foreign[0]} is not one of your contacts`);
    if (foreign.length > 1) throw new ApiError('BAD_REQUEST', `member_ids: ${foreign.join(', ')} are not your contacts`);
  }

  private async addMembers(manager: EntityManager, groupId: string, contactIds: string[]): Promise<void> {
    if (contactIds.length === 0) return;
    await manager.query(
      `INSERT INTO group_members (group_id, contact_id) SELECT $1, unnest($2::text[]) ON CONFLICT (group_id, contact_id) DO NOTHING`,
      [groupId, contactIds],
    );
  }
}
