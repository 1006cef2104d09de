import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { SqlRepository } from '../../infra/database/sql-repository';
import { linkedUserSql } from '../contacts/contact-links';
import { ConversationDto, ConversationKind, GroupRole } from './dto/conversation.dto';
import { MessageDirection } from './dto/message.dto';
import { MessageType } from './entities/message.entity';
import { positionAtSql } from './message-cursor';

/** A conversation of the inbox with its keyset position (the last message's time at microsecond precision, or null). */
export interface InboxEntry {
  conversation: ConversationDto;
  positionAt: string | null;
}

interface ConversationRow {
  kind: ConversationKind;
  id: string;
  name: string;
  role: GroupRole | null;
  last_id: string | null;
  last_content: string | null;
  last_type: MessageType | null;
  last_at: Date | null;
  last_direction: MessageDirection | null;
  position_at: string | null;
  unread: number;
}

/**
 * The conversations of one user: every contact; their own groups; and groups
 * of other users that one of whose contacts is linked to the user (as
 * contact-links derive it). `peer_id` is who writes to the user in that
 * conversation (internal), `out_to` what the user writes to (null: they do
 * not write there, a member's view of a group).
 */
const CONVERSATIONS_SQL = `
  me AS (SELECT u.verified_email FROM users u WHERE u.id = $1),
  conv AS (
    SELECT 'contact'::text AS kind, c.id, c.name, NULL::text AS role, ${linkedUserSql('c')} AS peer_id,
           'contact'::text AS msg_kind, c.id AS out_to, NULL::text AS group_id
      FROM contacts c WHERE c.user_id = $1
    UNION ALL
    SELECT 'group', g.id, g.name, 'owner', NULL, 'group', g.id, g.id FROM groups g WHERE g.user_id = $1
    UNION ALL
    SELECT DISTINCT 'group', g.id, g.name, 'member', g.user_id, 'group', NULL::text, g.id
      FROM me
      JOIN contacts c ON c.email IS NOT NULL AND lower(c.email) = me.verified_email AND c.user_id <> $1
      JOIN group_members gm ON gm.contact_id = c.id
      JOIN groups g ON g.id = gm.group_id
  ),
  unread AS (
    SELECT m.sender_id, m.recipient_kind, CASE WHEN m.recipient_kind = 'group' THEN m.recipient_id END AS group_id, count(*)::int AS n
      FROM message_recipients r JOIN messages m ON m.id = r.message_id
     WHERE r.recipient_user_id = $1 AND r.read_at IS NULL AND m.sender_id <> $1
     GROUP BY 1, 2, 3
  ),
  listed AS (
    SELECT conv.kind, conv.id, conv.name, conv.role, last.id AS last_id, last.content AS last_content, last.type AS last_type,
           last.created_at AS last_at, last.direction AS last_direction, COALESCE(u.n, 0) AS unread
      FROM conv
      LEFT JOIN LATERAL (
        SELECT * FROM (
          (SELECT m.id, m.content, m.type, m.created_at, 'outbound'::text AS direction FROM messages m
            WHERE conv.out_to IS NOT NULL AND m.sender_id = $1 AND m.recipient_id = conv.out_to AND m.recipient_kind = conv.msg_kind
            ORDER BY m.created_at DESC, m.id DESC LIMIT 1)
          UNION ALL
          (SELECT m.id, m.content, m.type, m.created_at, 'inbound'::text FROM messages m
            WHERE conv.peer_id IS NOT NULL AND m.sender_id = conv.peer_id AND m.recipient_kind = conv.msg_kind
              AND (conv.group_id IS NULL OR m.recipient_id = conv.group_id)
              AND EXISTS (SELECT 1 FROM message_recipients r WHERE r.message_id = m.id AND r.recipient_user_id = $1)
            ORDER BY m.created_at DESC, m.id DESC LIMIT 1)
        ) both_sides ORDER BY created_at DESC, id DESC LIMIT 1
      ) last ON true
      LEFT JOIN unread u ON u.sender_id = conv.peer_id AND u.recipient_kind = conv.msg_kind AND u.group_id IS NOT DISTINCT FROM conv.group_id
  ),
  cursor_name AS (SELECT COALESCE((SELECT lower(name) FROM conv WHERE id = $3 LIMIT 1), '') AS name)`;

/**
 * The inbox, read-only: one statement over contacts, groups, group members,
 * messages and their recipients (tables of the contacts and messages areas),
 * which this repository only reads.
 */
@Injectable()
export class ConversationsRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /** The user's conversations, latest message first (none yet: last, by name), after the position given; at most `take`. */
  async page(userId: string, after: { at: string | null; id: string } | null, take: number): Promise<InboxEntry[]> {
    const rows = await this.rows<ConversationRow>(
      `WITH ${CONVERSATIONS_SQL}
       SELECT listed.*, ${positionAtSql('listed.last_at')} AS position_at
         FROM listed, cursor_name
        WHERE $3::text IS NULL
           OR ($2::timestamptz IS NOT NULL AND (listed.last_at < $2::timestamptz OR listed.last_at IS NULL
                 OR (listed.last_at = $2::timestamptz AND (lower(listed.name), listed.id) > (cursor_name.name, $3::text))))
           OR ($2::timestamptz IS NULL AND listed.last_at IS NULL AND (lower(listed.name), listed.id) > (cursor_name.name, $3::text))
        ORDER BY listed.last_at DESC NULLS LAST, lower(listed.name), listed.id
        LIMIT $4`,
      [userId, after?.at ?? null, after?.id ?? null, take],
    );
    return rows.map((row) => ({ conversation: toConversation(row), positionAt: row.position_at }));
  }
}

function toConversation(row: ConversationRow): ConversationDto {
  return {
    kind: row.kind,
    id: row.id,
    name: row.name,
    role: row.role,
    last_message:
      row.last_id === null
        ? null
        : {
            id: row.last_id,
            content: row.last_content!,
            type: row.last_type!,
            created_at: row.last_at!.toISOString(),
            direction: row.last_direction!,
          },
    unread: row.unread,
  };
}
