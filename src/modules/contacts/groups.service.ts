import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { isId, newId } from '../../common/ids';
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

/** Named sets of the owner's contacts. A group may only hold the owner's own contacts. */
@Injectable()
export class GroupsService {
  constructor(
    @InjectRepository(GroupEntity) private readonly groups: Repository<GroupEntity>,
    private readonly contacts: ContactsService,
  ) {}

  async create(userId: string, input: CreateGroupDto): Promise<GroupDto> {
    const id = newId('grp');
    await this.groups.manager.transaction(async (manager) => {
      const members = input.member_ids ?? [];
      await this.refuseForeignMembers(manager, userId, members);
      await manager.insert(GroupEntity, { id, userId, name: input.name });
      await this.addMembers(manager, id, members);
    });
    return this.get(userId, id);
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
    await this.groups.manager.transaction(async (manager) => {
      const group = await manager.findOne(GroupEntity, { where: { id: groupId, userId }, lock: { mode: 'pessimistic_write' } });
      if (!group) throw notFound(groupId);
      if (patch.name === undefined && patch.member_ids === undefined) return;
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
    });
    return this.get(userId, groupId);
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
    if (!isId(groupId, 'grp')) return null;
    const group = await manager.findOne(GroupEntity, { where: { id: groupId, userId } });
    if (!group) return null;
    const rows: Array<{ id: string; linked_user_id: string | null }> = await manager.query(
      `SELECT c.id, ${linkedUserSql('c')} AS linked_user_id FROM group_members m JOIN contacts c ON c.id = m.contact_id
        WHERE m.group_id = $1 ORDER BY m.added_at, c.id`,
      [groupId],
    );
    return rows.map((row) => ({ contactId: row.id, linkedUserId: row.linked_user_id }));
  }

  /** Every group of the user with its member ids, for the personal data export. */
  async exportFor(userId: string, manager: EntityManager): Promise<GroupDto[]> {
    const rows: GroupRow[] = await manager.query(`SELECT ${GROUP_COLUMNS} FROM groups g WHERE g.user_id = $1 ORDER BY g.created_at, g.id`, [
      userId,
    ]);
    return rows.map(toGroupDto);
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
