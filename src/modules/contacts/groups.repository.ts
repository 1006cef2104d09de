import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';
import { linkedUserSql } from './contact-links';
import type { Recipient } from './contacts.repository';
import { GroupEntity } from './entities/group.entity';

/** A group as its owner sees it, with its member contact ids in the order they were added. */
export interface Group {
  id: string;
  name: string;
  memberIds: string[];
  createdAt: Date;
  updatedAt: Date;
}

/** One of someone else's groups, as a user who is (or was) reached by it sees it. */
export interface GroupAsMember {
  id: string;
  name: string;
  /** Internal: whose group it is (the sender of its messages). */
  ownerId: string;
  /** Whether one of the group's contacts is linked to the user now. */
  member: boolean;
}

interface GroupRow {
  id: string;
  name: string;
  member_ids: string[];
  created_at: Date;
  updated_at: Date;
}

const GROUP_COLUMNS = `g.id, g.name, g.created_at, g.updated_at,
  COALESCE((SELECT array_agg(m.contact_id ORDER BY m.added_at, m.contact_id) FROM group_members m WHERE m.group_id = g.id), '{}') AS member_ids`;

function toGroup(row: GroupRow): Group {
  return { id: row.id, name: row.name, memberIds: row.member_ids, createdAt: row.created_at, updatedAt: row.updated_at };
}

/** The users linked to a group's member contacts (its members on the service), as SQL; `$1` is the group id. */
const LINKED_MEMBERS_SQL = `SELECT DISTINCT lu.id FROM group_members m JOIN contacts c ON c.id = m.contact_id
  JOIN users lu ON c.email IS NOT NULL AND lu.verified_email = lower(c.email) AND lu.id <> c.user_id
 WHERE m.group_id = $1`;

/** The `groups` and `group_members` tables: named sets of a user's contacts. */
@Injectable()
export class GroupsRepository extends SqlRepository {
  constructor(
    @InjectDataSource() dataSource: DataSource,
    @InjectRepository(GroupEntity) private readonly groups: Repository<GroupEntity>,
  ) {
    super(dataSource);
  }

  async insert(tx: Tx, group: { id: string; userId: string; name: string }): Promise<void> {
    await tx.insert(GroupEntity, group);
  }

  /** A page of the owner's groups by name, and how many they have (`GET /v1/groups`). */
  async page(userId: string, limit: number, offset: number): Promise<{ groups: Group[]; total: number }> {
    const { rows, total } = await this.pageWithTotal<GroupRow & { total: number }>(
      'groups_page',
      `SELECT ${GROUP_COLUMNS}, (SELECT count(*) FROM groups t WHERE t.user_id = $1)::int AS total
         FROM groups g WHERE g.user_id = $1 ORDER BY lower(g.name), g.name, g.id LIMIT $2 OFFSET $3`,
      `SELECT count(*)::int AS total FROM groups WHERE user_id = $1`,
      userId,
      limit,
      offset,
    );
    return { groups: rows.map(toGroup), total };
  }

  async findForUser(userId: string, groupId: string): Promise<Group | null> {
    const row = await this.first<GroupRow>(`SELECT ${GROUP_COLUMNS} FROM groups g WHERE g.id = $1 AND g.user_id = $2`, [groupId, userId]);
    return row ? toGroup(row) : null;
  }

  /** Every group of the user with its member ids, oldest first (the personal data export). */
  async allForUser(userId: string, tx?: Tx): Promise<Group[]> {
    const rows = await this.rows<GroupRow>(
      `SELECT ${GROUP_COLUMNS} FROM groups g WHERE g.user_id = $1 ORDER BY g.created_at, g.id`,
      [userId],
      tx,
    );
    return rows.map(toGroup);
  }

  /** The user's group, locked FOR UPDATE until the transaction ends; null when it is not theirs. */
  async findLocked(tx: Tx, userId: string, groupId: string): Promise<{ id: string; name: string } | null> {
    const group = await tx.findOne(GroupEntity, { where: { id: groupId, userId }, lock: { mode: 'pessimistic_write' } });
    return group ? { id: group.id, name: group.name } : null;
  }

  /** Sets the name and touches `updated_at` (also when only the membership changed). */
  async rename(tx: Tx, groupId: string, name: string): Promise<void> {
    await this.execute(`UPDATE groups SET name = $2, updated_at = now() WHERE id = $1`, [groupId, name], tx);
  }

  /** The groups a contact leaves change membership, so they count as updated. */
  async touchHolding(tx: Tx, contactId: string): Promise<void> {
    await this.execute(
      `UPDATE groups SET updated_at = now() WHERE id IN (SELECT group_id FROM group_members WHERE contact_id = $1)`,
      [contactId],
      tx,
    );
  }

  /** False when the user has no such group. */
  async delete(userId: string, groupId: string): Promise<boolean> {
    const result = await this.groups.delete({ id: groupId, userId });
    return Boolean(result.affected);
  }

  owns(userId: string, groupId: string): Promise<boolean> {
    return this.groups.exists({ where: { id: groupId, userId } });
  }

  async findName(userId: string, groupId: string, tx?: Tx): Promise<string | null> {
    const group = await this.db(tx).findOne(GroupEntity, { where: { id: groupId, userId } });
    return group?.name ?? null;
  }

  /** The group's members as recipients, in the order they were added. */
  async recipients(groupId: string, tx?: Tx): Promise<Recipient[]> {
    const rows = await this.rows<{ id: string; linked_user_id: string | null }>(
      `SELECT c.id, ${linkedUserSql('c')} AS linked_user_id FROM group_members m JOIN contacts c ON c.id = m.contact_id
        WHERE m.group_id = $1 ORDER BY m.added_at, c.id`,
      [groupId],
      tx,
    );
    return rows.map((row) => ({ contactId: row.id, linkedUserId: row.linked_user_id }));
  }

  /** Someone else's group as the user sees it; null for an unknown id and for the user's own groups. */
  async asMember(userId: string, groupId: string): Promise<GroupAsMember | null> {
    const row = await this.first<{ id: string; name: string; owner_id: string; member: boolean }>(
      `SELECT g.id, g.name, g.user_id AS owner_id,
              EXISTS (SELECT 1 FROM group_members m JOIN contacts c ON c.id = m.contact_id
                       WHERE m.group_id = g.id AND c.email IS NOT NULL
                         AND lower(c.email) = (SELECT u.verified_email FROM users u WHERE u.id = $1)) AS member
         FROM groups g WHERE g.id = $2 AND g.user_id <> $1`,
      [userId, groupId],
    );
    return row ? { id: row.id, name: row.name, ownerId: row.owner_id, member: row.member } : null;
  }

  /** The users linked to the group's member contacts. */
  async linkedMembers(tx: Tx, groupId: string): Promise<string[]> {
    const rows = await this.rows<{ id: string }>(LINKED_MEMBERS_SQL, [groupId], tx);
    return rows.map((row) => row.id);
  }

  async addMembers(tx: Tx, groupId: string, contactIds: string[]): Promise<void> {
    await this.execute(
      `INSERT INTO group_members (group_id, contact_id) SELECT $1, unnest($2::text[]) ON CONFLICT (group_id, contact_id) DO NOTHING`,
      [groupId, contactIds],
      tx,
    );
  }

  /** Removes every member not in `keepContactIds`; members that stay keep their place. */
  async removeMembersExcept(tx: Tx, groupId: string, keepContactIds: string[]): Promise<void> {
    await this.execute(
      `DELETE FROM group_members WHERE group_id = $1 AND NOT (contact_id = ANY($2::text[]))`,
      [groupId, keepContactIds],
      tx,
    );
  }
}
