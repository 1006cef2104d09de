import { userChannel } from '../../infra/realtime/gateway-channels';
import type { BusEvent } from '../../infra/realtime/gateway-channels';
import type { MessageType, RecipientKind } from './entities/message.entity';

export const MESSAGE_CREATED = 'message.created';

/** How long after commit the durable copy of `message.created` goes out; the fast path has published it by then. */
export const DURABLE_COPY_DELAY_MS = 1_000;

/** Payload of `message.created` (a type alias, so it is a plain JSON record). */
export type MessageCreatedPayload = {
  message_id: string;
  sender_id: string;
  recipient_id: string;
  recipient_kind: RecipientKind;
  /** Service users the message reaches (linked contacts), without repeats. */
  recipient_user_ids: string[];
  /**
   * By recipient user: their contact for the sender, how their frame names the
   * sender. A recipient who has not added the sender is absent (`sender_contact_id: null`).
   */
  sender_contact_ids?: Record<string, string>;
  contact_ids: string[];
  /** The group's name at sending, for a group message (absent on events recorded before issue 23). */
  group_name?: string;
  type: MessageType;
  content: string;
  created_at: string;
};

/**
 * The gateway publications of one message: an `outbound` copy on the
 * sender's channel (their other sockets) and an `inbound` copy on each
 * recipient's, naming the sender by the recipient's own contact for them
 * (`sender_contact_id`, null when they have not added the sender), never by
 * user id. A group message carries `group_id` and `group_name` on every copy,
 * so a member's client files it under the group, not under the sender. The
 * sender's copy says `waiting` when no recipient is on the service yet (the
 * pending-contact rule). Built the same way by the fast path and the durable
 * path, so a socket that gets both sees the same frame twice and drops the second; the
 * durable copy says `replayed: true`, as a sync replay does.
 */
export function messageCreatedPublications(
  prefix: string,
  payload: MessageCreatedPayload,
  options: { durable?: boolean } = {},
): Array<{ channel: string; event: BusEvent }> {
  const group = payload.recipient_kind === 'group' ? { group_id: payload.recipient_id, group_name: payload.group_name ?? null } : {};
  const item = {
    id: payload.message_id,
    recipient_kind: payload.recipient_kind,
    ...group,
    type: payload.type,
    content: payload.content,
    created_at: payload.created_at,
    // The durable copy may repeat what a socket of an earlier page load already showed: like a sync replay, it tells
    // a client to trust the service's lists (read state, unread counts) rather than count it as new.
    ...(options.durable ? { replayed: true } : {}),
  };
  const publications: Array<{ channel: string; event: BusEvent }> = [
    {
      channel: userChannel(prefix, payload.sender_id),
      event: {
        type: MESSAGE_CREATED,
        data: {
          ...item,
          status: outboundStatusAtSend(payload.recipient_user_ids),
          direction: 'outbound',
          sender_contact_id: null,
          recipient_id: payload.recipient_id,
        },
      },
    },
  ];
  for (const userId of payload.recipient_user_ids) {
    if (userId === payload.sender_id) continue;
    publications.push({
      channel: userChannel(prefix, userId),
      event: {
        type: MESSAGE_CREATED,
        data: {
          ...item,
          status: 'sent',
          direction: 'inbound',
          sender_contact_id: payload.sender_contact_ids?.[userId] ?? null,
          recipient_id: userId,
        },
      },
    });
  }
  return publications;
}

/** The sender's status of a new message: `waiting` until one of its recipients is on the service, else `sent`. */
export function outboundStatusAtSend(recipientUserIds: string[]): 'sent' | 'waiting' {
  return recipientUserIds.length === 0 ? 'waiting' : 'sent';
}
