import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { isId, newId } from '../../common/ids';
import type { AppConfig } from '../../config/app-config';
import { APP_CONFIG } from '../../config/config.module';
import { GatewayBus } from '../../infra/realtime/gateway-bus';
import { BusEvent, userChannel } from '../../infra/realtime/gateway-channels';
import { ContactsService, Recipient } from './contacts.service';
import { CreateGroupDto, GroupDto, GroupListDto, UpdateGroupDto } from './dto/group.dto';
import { Page } from './dto/page-query.dto';
import { Group, GroupAsMember, GroupsRepository } from './groups.repository';

export type { GroupAsMember } from './groups.repository';

function toGroupDto(group: Group): GroupDto {
  return {
    id: group.id,
    name: group.name,
    member_ids: group.memberIds,
    created_at: group.createdAt.toISOString(),
    updated_at: group.updatedAt.toISOString(),
  };
}

const notFound = (id: string) => new ApiError('NOT_FOUND', `No group ${id}`);

/** Gateway event telling a group's members (and its owner's sessions) its new name and size. */
export const GROUP_UPDATED = 'group.updated';

/** Named sets of the owner's contacts. A group may only hold the owner's own contacts. */
@Injectable()
export class GroupsService {
  private readonly logger = new Logger(GroupsService.name);

  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly groups: GroupsRepository,
    private readonly contacts: ContactsService,
    private readonly bus: GatewayBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async create(userId: string, input: CreateGroupDto): Promise<GroupDto> {
    const id = newId('grp');
    const audience = await this.dataSource.transaction(async (manager) => {
      const members = input.member_ids ?? [];
      await this.refuseForeignMembers(manager, userId, members);
      await this.groups.insert(manager, { id, userId, name: input.name });
      await this.addMembers(manager, id, members);
      return this.groups.linkedMembers(manager, id);
    });
    const group = await this.get(userId, id);
    if (audience.length > 0) this.announce(userId, audience, group);
    return group;
  }

  async list(userId: string, page: Page): Promise<GroupListDto> {
    const { groups, total } = await this.groups.page(userId, page.limit, page.offset);
    return { groups: groups.map(toGroupDto), total, limit: page.limit, offset: page.offset };
  }

  async get(userId: string, groupId: string): Promise<GroupDto> {
    if (!isId(groupId, 'grp')) throw notFound(groupId);
    const group = await this.groups.findForUser(userId, groupId);
    if (!group) throw notFound(groupId);
    return toGroupDto(group);
  }

  /** Renames and/or replaces the membership; members that stay keep their place. */
  async update(userId: string, groupId: string, patch: UpdateGroupDto): Promise<GroupDto> {
    if (!isId(groupId, 'grp')) throw notFound(groupId);
    const audience = await this.dataSource.transaction(async (manager) => {
      const group = await this.groups.findLocked(manager, userId, groupId);
      if (!group) throw notFound(groupId);
      if (patch.name === undefined && patch.member_ids === undefined) return null;
      // Members removed by this change are told too: their client stops showing them in the group.
      const before = await this.groups.linkedMembers(manager, groupId);
      if (patch.member_ids !== undefined) {
        await this.refuseForeignMembers(manager, userId, patch.member_ids);
        await this.groups.removeMembersExcept(manager, groupId, patch.member_ids);
        await this.addMembers(manager, groupId, patch.member_ids);
      }
      // Touch updated_at even when only the membership changed.
      await this.groups.rename(manager, groupId, patch.name !== undefined ? patch.name : group.name);
      return [...new Set([...before, ...(await this.groups.linkedMembers(manager, groupId))])];
    });
    const group = await this.get(userId, groupId);
    if (audience) this.announce(userId, audience, group);
    return group;
  }

  /** Deletes the group; its member contacts stay. */
  async remove(userId: string, groupId: string): Promise<void> {
    if (!isId(groupId, 'grp')) throw notFound(groupId);
    if (!(await this.groups.delete(userId, groupId))) throw notFound(groupId);
  }

  async owns(userId: string, groupId: string): Promise<boolean> {
    return isId(groupId, 'grp') && (await this.groups.owns(userId, groupId));
  }

  /** The members of one of the user's groups as recipients, or null when the group is not the user's. */
  async findRecipients(userId: string, groupId: string, manager?: EntityManager): Promise<Recipient[] | null> {
    return (await this.findForSending(userId, groupId, manager))?.recipients ?? null;
  }

  /** One of the user's groups with its name and members as recipients, or null when the group is not the user's. */
  async findForSending(
    userId: string,
    groupId: string,
    manager?: EntityManager,
  ): Promise<{ name: string; recipients: Recipient[] } | null> {
    if (!isId(groupId, 'grp')) return null;
    const name = await this.groups.findName(userId, groupId, manager);
    if (name === null) return null;
    return { name, recipients: await this.groups.recipients(groupId, manager) };
  }

  /**
   * Someone else's group as the user sees it: its name, its owner, and whether
   * the user is a member now (one of its contacts is linked to the user).
   * Null for an unknown id and for the user's own groups.
   */
  async asMember(userId: string, groupId: string): Promise<GroupAsMember | null> {
    if (!isId(groupId, 'grp')) return null;
    return this.groups.asMember(userId, groupId);
  }

  /** Every group of the user with its member ids, for the personal data export. */
  async exportFor(userId: string, manager: EntityManager): Promise<GroupDto[]> {
    return (await this.groups.allForUser(userId, manager)).map(toGroupDto);
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
    await this.groups.addMembers(manager, groupId, contactIds);
  }
}
