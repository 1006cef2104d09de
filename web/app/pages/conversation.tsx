import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiFailure, describeError, ok, type Schemas } from '../../shared/api';
import { Link } from '../../shared/router';
import { Button, formatDate, Loaded, Notice, PageTitle, useResource } from '../../shared/ui';
import { gateway, GatewayFrame, useConnectionState, useGatewayEvents } from '../gateway';
import { conversationOf, inbox, useInbox, useOpenConversation } from '../inbox';
import { MessageText } from '../message-text';
import { OutgoingMessage, outbox } from '../outbox';
import { PRODUCT } from '../product';
import { api } from '../session';
import { Contact, PresenceBadge } from './contacts';

interface Message {
  id: string;
  direction: 'outbound' | 'inbound';
  /** Inbound: the viewer's contact who sent it (null from someone the viewer has not added). */
  sender_contact_id: string | null;
  recipient_id: string;
  recipient_kind?: string;
  group_id?: string | null;
  type: string;
  content: string;
  /** `sent`, `delivered`, `read` or `waiting` (no recipient on the service yet), from the history or the send. */
  status: string;
  delivered_at?: string | null;
  read_at?: string | null;
  created_at: string;
  /** Local receipt state from the gateway. */
  receipt?: 'delivered' | 'read';
  /** Still in the outbox: `sending`, `waiting` (service unreachable) or `failed` (refused). */
  pending?: OutgoingMessage['state'];
  pendingKey?: string;
  error?: string;
  errorStatus?: number;
}

/** The other end of a thread: one of the user's contacts, or a group the user owns or belongs to. */
export interface Peer {
  kind: 'contact' | 'group';
  id: string;
  name: string;
}

const PAGE = 30;

/** Oldest first, one entry per id (a message can arrive live and again in a sync or a reload). */
function merge(current: Message[], incoming: Message[]): Message[] {
  const byId = new Map(current.map((m) => [m.id, m]));
  for (const message of incoming) byId.set(message.id, { ...byId.get(message.id), ...message });
  return [...byId.values()].sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1));
}

const str = (value: unknown, fallback: string) => (typeof value === 'string' ? value : fallback);

function asMessage(data: Record<string, unknown>): Message | null {
  if (typeof data.id !== 'string' || typeof data.content !== 'string' || typeof data.created_at !== 'string') return null;
  return {
    id: data.id,
    direction: data.direction === 'inbound' ? 'inbound' : 'outbound',
    sender_contact_id: typeof data.sender_contact_id === 'string' ? data.sender_contact_id : null,
    recipient_id: str(data.recipient_id, ''),
    recipient_kind: typeof data.recipient_kind === 'string' ? data.recipient_kind : undefined,
    group_id: typeof data.group_id === 'string' ? data.group_id : undefined,
    type: str(data.type, 'text'),
    content: data.content,
    status: str(data.status, 'sent'),
    created_at: data.created_at,
  };
}

const isGroupMessage = (m: Message) => m.recipient_kind === 'group' || Boolean(m.group_id) || (m.recipient_id ?? '').startsWith('grp_');

const RANK = { sent: 0, waiting: 0, delivered: 1, read: 2 } as Record<string, number>;

/** What the sender sees under an outbound message: the best of the stored status and the live receipts. */
function receiptLabel(m: Message, peer: Peer): string {
  if (m.pending === 'sending') return 'Sending…';
  if (m.pending === 'waiting') return 'Waiting for the connection… (sends by itself)';
  if (m.pending === 'failed') {
    // A member of someone else's group, where the service lets only the owner write.
    if (peer.kind === 'group' && (m.errorStatus === 404 || m.errorStatus === 403)) return 'Not sent: you cannot write to this group';
    return `Not sent: ${m.error ?? 'refused by the service'}`;
  }
  const stored = m.read_at ? 'read' : m.delivered_at ? 'delivered' : m.status;
  const best = (RANK[m.receipt ?? 'sent'] ?? 0) > (RANK[stored] ?? 0) ? m.receipt! : stored;
  if (best === 'read') return 'Read';
  if (best === 'delivered') return 'Delivered';
  if (best === 'waiting') return peer.kind === 'contact' ? `Waiting for ${peer.name} to join` : 'Waiting for members to join';
  return 'Sent';
}

function fromOutbox(item: OutgoingMessage): Message {
  return {
    id: `pending-${item.key}`,
    direction: 'outbound',
    sender_contact_id: null,
    recipient_id: item.recipient_id,
    type: 'text',
    content: item.content,
    status: 'sending',
    created_at: item.created_at,
    pending: item.state,
    pendingKey: item.key,
    error: item.error,
    errorStatus: item.errorStatus,
  };
}

/**
 * A thread's messages: the newest page of the history, older pages on demand, the outbox's queue for this peer and
 * the gateway's frames (new messages, receipts, typing), merged by id.
 */
function useThreadMessages(peer: Peer) {
  const [messages, setMessages] = useState<Message[]>([]);
  const [queued, setQueued] = useState<OutgoingMessage[]>(() => outbox.list(peer.id));
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [typing, setTyping] = useState(false);
  /** When the oldest message of the history pages loaded so far was sent. */
  const [oldestLoaded, setOldestLoaded] = useState<string | null>(null);
  const typingTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);

  // A one-to-one thread never shows group messages, whatever the history or a frame says.
  const belongs = (m: Message) =>
    peer.kind === 'group'
      ? isGroupMessage(m) && (m.group_id ?? m.recipient_id) === peer.id
      : !isGroupMessage(m) && (m.direction === 'outbound' ? m.recipient_id === peer.id : m.sender_contact_id === peer.id);
  // The history asked for this peer is this thread's, except that a one-to-one thread drops any group message.
  const fromHistory = (items: Message[]) =>
    peer.kind === 'group'
      ? items.map((m) => ({ ...m, recipient_kind: 'group', group_id: peer.id }))
      : items.filter((m) => !isGroupMessage(m));

  const noteOldest = (items: Message[]) => {
    const oldest = items.reduce<string | null>((min, m) => (min === null || m.created_at < min ? m.created_at : min), null);
    if (oldest !== null) setOldestLoaded((current) => (current === null || oldest < current ? oldest : current));
  };

  const loadNewest = async () => {
    try {
      const page = await ok(api.GET('/v1/messages', { params: { query: { with: peer.id, limit: PAGE } } }));
      const items = fromHistory(page.messages);
      setMessages((current) => merge(current, items));
      noteOldest(page.messages);
      setCursor((current) => current ?? page.next_cursor);
      page.messages.forEach((m) => gateway.noteMessage(m.created_at));
      setError(null);
    } catch (failure) {
      if (!(failure instanceof ApiFailure && failure.status === 0)) setError(describeError(failure));
    } finally {
      setLoading(false);
    }
  };

  const loadOlder = async () => {
    if (!cursor) return;
    try {
      const page = await ok(api.GET('/v1/messages', { params: { query: { with: peer.id, limit: PAGE, cursor } } }));
      setMessages((current) => merge(current, fromHistory(page.messages)));
      noteOldest(page.messages);
      setCursor(page.next_cursor);
      setError(null);
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  useEffect(() => {
    setMessages([]);
    setCursor(null);
    setOldestLoaded(null);
    setLoading(true);
    setQueued(outbox.list(peer.id));
    void loadNewest();
    const offs = [
      outbox.subscribe(() => setQueued(outbox.list(peer.id))),
      outbox.onSent((_key, sent) => {
        if (sent.recipient_id !== peer.id) return;
        const message: Message = {
          ...sent,
          direction: 'outbound',
          sender_contact_id: null,
          ...(peer.kind === 'group' ? { recipient_kind: 'group', group_id: peer.id } : {}),
        };
        setMessages((current) => merge(current, [message]));
      }),
    ];
    return () => offs.forEach((off) => off());
  }, [peer.id]);

  useGatewayEvents(
    ['message.created', 'message.delivered', 'message.read', 'typing', 'ready'],
    (frame: GatewayFrame) => {
      const data = frame.data ?? {};
      if (frame.type === 'ready') {
        // After a reconnect, fetch the newest page too: nothing missed, duplicates merge by id.
        void loadNewest();
      } else if (frame.type === 'message.created') {
        const message = asMessage(data);
        if (message && conversationOf(data) === peer.id && belongs(message)) {
          setMessages((current) => merge(current, [message]));
          if (message.direction === 'inbound') setTyping(false);
        }
      } else if (frame.type === 'message.delivered' || frame.type === 'message.read') {
        const id = data.message_id;
        const receipt = frame.type === 'message.read' ? 'read' : 'delivered';
        setMessages((current) =>
          current.map((m) => (m.id === id && !(m.receipt === 'read' && receipt === 'delivered') ? { ...m, receipt } : m)),
        );
      } else if (frame.type === 'typing' && peer.kind === 'contact' && data.contact_id === peer.id) {
        if (data.recipient_kind === 'group') return;
        clearTimeout(typingTimer.current);
        const started = data.state !== 'stopped';
        setTyping(started);
        if (started) typingTimer.current = setTimeout(() => setTyping(false), 8_000);
      }
    },
    [peer.id],
  );

  // A live copy of a message older than the history loaded so far (the outbox's durable copy arrives a second after
  // the message; a sync after a reconnect) belongs to the older pages: the pager shows it in its place, not after a gap.
  const shown = loading ? [] : cursor && oldestLoaded ? messages.filter((m) => m.created_at >= oldestLoaded) : messages;
  return { messages: shown, queued, cursor, loading, error, typing, loadOlder };
}

/** Tells the sender their messages were read: the inbound ones shown on this page, while the page is seen and live. */
function useReadReceipts(peer: Peer, messages: Message[], connection: ReturnType<typeof useConnectionState>) {
  const unreadIds = messages.filter((m) => m.direction === 'inbound' && m.status !== 'read' && !m.read_at).map((m) => m.id);
  const reported = useRef(new Set<string>());
  useEffect(() => {
    const fresh = unreadIds.filter((id) => !reported.current.has(id)).slice(-100);
    if (fresh.length === 0 || connection !== 'open' || document.visibilityState === 'hidden') return;
    fresh.forEach((id) => reported.current.add(id));
    inbox.markRead(peer.id);
    void gateway.send('message.read', { message_ids: fresh }, true).catch(() => fresh.forEach((id) => reported.current.delete(id)));
  }, [unreadIds.join(','), connection]);
}

/** The thread as shown: the service's messages and what is still queued, each once. */
function visibleMessages(messages: Message[], queued: OutgoingMessage[]): Message[] {
  // The service's own copy of a queued message (the gateway's echo, or the history after a lost answer) can arrive
  // before the send's answer: show it once, as the service's message.
  const claimed = new Set<string>();
  const stillQueued = queued.filter((item) => {
    if (item.state === 'failed') return true;
    const twin = messages.find(
      (m) =>
        m.direction === 'outbound' &&
        !claimed.has(m.id) &&
        m.content === item.content &&
        Date.parse(m.created_at) >= Date.parse(item.created_at) - 120_000,
    );
    if (twin) claimed.add(twin.id);
    return !twin;
  });
  return merge(messages, stillQueued.map(fromOutbox));
}

function MessageList(props: { peer: Peer; shown: Message[]; loading: boolean; contacts?: Map<string, Contact> }) {
  const { peer, shown, loading } = props;
  const listRef = useRef<HTMLDivElement>(null);
  // Keep the newest message in view as messages arrive.
  const newestId = shown[shown.length - 1]?.id;
  useEffect(() => {
    const list = listRef.current;
    if (list) list.scrollTop = list.scrollHeight;
  }, [newestId]);

  const senderName = (m: Message) => {
    if (m.direction === 'outbound') return 'You';
    if (peer.kind === 'contact') return peer.name;
    return (m.sender_contact_id && props.contacts?.get(m.sender_contact_id)?.name) || 'A member';
  };

  return (
    <div
      class="messages"
      ref={listRef}
      role="log"
      aria-live="polite"
      aria-label={peer.kind === 'group' ? `Messages in ${peer.name}` : `Messages with ${peer.name}`}
      tabIndex={0}
    >
      <ol class="message-list">
        {!loading && shown.length === 0 && <li class="muted">No messages yet. Say hello!</li>}
        {shown.map((m) => (
          <li
            key={m.id}
            class={`message message-${m.direction}${m.pending ? ` message-pending message-${m.pending}` : ''}`}
            data-message-id={m.pending ? undefined : m.id}
          >
            {peer.kind === 'group' && m.direction === 'inbound' ? (
              <p class="message-sender">{senderName(m)}</p>
            ) : (
              <span class="visually-hidden">{senderName(m)}:</span>
            )}
            <p class="message-content">
              <MessageText text={m.content} />
            </p>
            <p class="message-meta">
              <time dateTime={m.created_at}>{formatDate(m.created_at)}</time>
              {m.direction === 'outbound' && (
                <>
                  {' · '}
                  <span class="receipt">{receiptLabel(m, peer)}</span>
                </>
              )}
            </p>
            {m.pending === 'failed' && m.pendingKey && (
              <div class="row">
                <Button onClick={() => outbox.retry(m.pendingKey!)}>Try again</Button>
                <Button onClick={() => outbox.discard(m.pendingKey!)}>Discard</Button>
              </div>
            )}
          </li>
        ))}
      </ol>
    </div>
  );
}

/** The message field: Enter sends (Shift+Enter is a new line); typing is announced to a contact now and then. */
function Composer(props: { peer: Peer }) {
  const { peer } = props;
  const [draft, setDraft] = useState('');
  const lastTypingSent = useRef(0);
  const onDraft = (value: string) => {
    setDraft(value);
    const now = Date.now();
    if (peer.kind === 'contact' && value && now - lastTypingSent.current > 3_000) {
      lastTypingSent.current = now;
      void gateway.send('typing', { recipient_id: peer.id, state: 'started' });
    }
  };

  const send = () => {
    const content = draft;
    if (!content.trim()) return;
    // The outbox sends it now, or once the service can be reached again, with the same idempotency key.
    outbox.send(peer.id, content);
    setDraft('');
    lastTypingSent.current = 0;
    if (peer.kind === 'contact') void gateway.send('typing', { recipient_id: peer.id, state: 'stopped' });
  };

  return (
    <form
      class="composer"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <label for="composer-input">{peer.kind === 'group' ? `Message to the group ${peer.name}` : `Message to ${peer.name}`}</label>
      <div class="composer-row">
        <textarea
          id="composer-input"
          name="content"
          rows={2}
          maxLength={4000}
          required
          value={draft}
          onInput={(event) => onDraft(event.currentTarget.value)}
          onKeyDown={(event) => {
            if (event.key === 'Enter' && !event.shiftKey) {
              event.preventDefault();
              send();
            }
          }}
        />
        <Button type="submit" variant="primary">
          Send
        </Button>
      </div>
    </form>
  );
}

/**
 * A conversation's messages and, where the user may write, its composer. A
 * member of someone else's group reads it only: a group is its owner's list of
 * contacts, so the service lets only the owner write to it (docs/decisions.md),
 * and the page points to the one-to-one thread with the owner instead.
 */
export function Thread(props: { peer: Peer; contacts?: Map<string, Contact>; readOnly?: boolean }) {
  const { peer } = props;
  const { messages, queued, cursor, loading, error, typing, loadOlder } = useThreadMessages(peer);
  const connection = useConnectionState();
  useOpenConversation(peer.id);
  useReadReceipts(peer, messages, connection);
  const shown = visibleMessages(messages, queued);
  return (
    <>
      {error && <Notice kind="error">{error}</Notice>}
      {connection !== 'open' && connection !== 'stopped' && (
        <p class="muted" role="status">
          {connection === 'connecting'
            ? 'Connecting to live updates…'
            : 'Offline: reconnecting… Messages you send wait and go out by themselves.'}
        </p>
      )}
      {cursor && (
        <Button onClick={() => void loadOlder()} class="button button-secondary">
          Load older messages
        </Button>
      )}
      <MessageList peer={peer} shown={shown} loading={loading} contacts={props.contacts} />
      <p class="typing" aria-live="polite">
        {typing ? `${peer.name} is typing…` : ''}
      </p>
      {props.readOnly ? <OwnerOnlyNote shown={shown} contacts={props.contacts} /> : <Composer peer={peer} />}
    </>
  );
}

/** In place of the composer on a member's group page: who writes here, and a way to answer them. */
function OwnerOnlyNote(props: { shown: Message[]; contacts?: Map<string, Contact> }) {
  // The owner as the member saved them: the sender of the group's messages, when the member added them back.
  const ownerId = props.shown.find((m) => m.direction === 'inbound' && m.sender_contact_id)?.sender_contact_id;
  const owner = ownerId ? props.contacts?.get(ownerId) : undefined;
  return (
    <p class="muted owner-only">
      {owner ? (
        <>
          Only {owner.name} writes to this group. <Link href={`/contacts/${owner.id}`}>Write to {owner.name}</Link>
        </>
      ) : (
        'Only the person who made this group writes to it. Add them as a contact to answer them.'
      )}
    </p>
  );
}

/** Polls a contact that is not linked yet, so it links (and its presence shows) without a reload once the friend joins. */
export function usePollUntilConnected(contact: { connected: boolean; email: string | null } | undefined, reload: () => void): void {
  useEffect(() => {
    if (!contact || contact.connected || !contact.email) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') reload();
    }, 10_000);
    return () => clearInterval(timer);
  }, [contact?.connected, contact?.email]);
}

export function ConversationPage(props: { contactId: string }) {
  const contact = useResource(() => ok(api.GET('/v1/contacts/{id}', { params: { path: { id: props.contactId } } })), [props.contactId]);
  usePollUntilConnected(contact.data, contact.reload);
  const wasConnected = useRef<boolean | null>(null);
  useEffect(() => {
    if (!contact.data) return;
    if (wasConnected.current === false && contact.data.connected) gateway.refresh();
    wasConnected.current = contact.data.connected;
  }, [contact.data?.connected]);
  return (
    <Loaded resource={contact}>
      {(data) => (
        <>
          <PageTitle product={PRODUCT} actions={<PresenceBadge contactId={data.connected ? data.id : null} refreshIfUnknown />}>
            {data.name}
          </PageTitle>
          <p class="thread-nav">
            <Link href="/inbox">Inbox</Link> · <Link href="/contacts">Contacts</Link>
          </p>
          {!data.connected && (
            <Notice kind="info">
              {data.email
                ? `Your messages are kept here and reach ${data.name} once they use this service with ${data.email}. Once they add you back, you see when they are online and when they read your messages.`
                : `${data.name} has no email address, so your messages are kept here only: add the address they use this service with to reach them.`}
            </Notice>
          )}
          <Thread peer={{ kind: 'contact', id: data.id, name: data.name }} />
        </>
      )}
    </Loaded>
  );
}

/** The group as its owner reads it, or as a member knows it from the conversation list (no members). */
type Group = Pick<Schemas['GroupDto'], 'id' | 'name'> & Partial<Pick<Schemas['GroupDto'], 'member_ids'>>;

/**
 * A group's conversation, for its owner and its members alike. The owner can
 * read the group (`GET /v1/groups/:id`); a member knows it from the inbox's
 * conversation list (and from the `group_name` of its messages).
 */
export function GroupConversationPage(props: { groupId: string }) {
  const state = useInbox();
  const group = useResource(async (): Promise<Group | null> => {
    try {
      return await ok(api.GET('/v1/groups/{id}', { params: { path: { id: props.groupId } } }));
    } catch (failure) {
      if (failure instanceof ApiFailure && (failure.status === 404 || failure.status === 403)) return null;
      throw failure;
    }
  }, [props.groupId]);
  const contacts = useResource(() => ok(api.GET('/v1/contacts', { params: { query: { limit: 100 } } })), []);
  const byId = new Map((contacts.data?.contacts ?? []).map((c) => [c.id, c]));
  useGatewayEvents(
    ['group.updated'],
    (frame) => {
      if (frame.data?.group_id === props.groupId) group.reload();
    },
    [props.groupId],
  );
  const known = state.conversations.find((c) => c.id === props.groupId);
  return (
    <Loaded resource={group}>
      {(data) => {
        const name = data?.name ?? known?.name;
        if (!name) {
          return state.loaded || !state.available ? (
            <>
              <PageTitle product={PRODUCT}>Group</PageTitle>
              <Notice kind="error">This group does not exist, or you are no longer one of its members.</Notice>
              <p>
                <Link href="/groups">Back to groups</Link>
              </p>
            </>
          ) : (
            <p class="loading" role="status">
              Loading…
            </p>
          );
        }
        const members = (data?.member_ids ?? []).map((id) => byId.get(id)?.name ?? 'Unknown contact');
        return (
          <>
            <PageTitle product={PRODUCT}>{name}</PageTitle>
            <p class="thread-nav">
              <Link href="/inbox">Inbox</Link> · <Link href="/groups">Groups</Link>
            </p>
            <p class="muted">
              {data
                ? `Group you created${members.length > 0 ? ` with ${members.join(', ')}` : ''}.`
                : 'Group you are a member of: its owner writes, its members read.'}
            </p>
            <Thread peer={{ kind: 'group', id: props.groupId, name }} contacts={byId} readOnly={!data} />
          </>
        );
      }}
    </Loaded>
  );
}
