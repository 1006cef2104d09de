import { useEffect, useRef, useState } from 'preact/hooks';
import { describeError, newIdempotencyKey } from '../../shared/api';
import { Link } from '../../shared/router';
import { Button, formatDate, Loaded, Notice, PageTitle, useResource } from '../../shared/ui';
import { gateway, GatewayFrame, useConnectionState, useGatewayEvents } from '../gateway';
import { PRODUCT } from '../product';
import { api } from '../session';
import { Contact, PresenceBadge } from './contacts';

interface Message {
  id: string;
  direction: 'outbound' | 'inbound';
  /** Inbound: the viewer's contact who sent it (null from someone the viewer has not added). */
  sender_contact_id: string | null;
  recipient_id: string;
  type: string;
  content: string;
  status: string;
  created_at: string;
  /** Local receipt state from the gateway. */
  receipt?: 'delivered' | 'read';
  sending?: boolean;
}

interface History {
  messages: Message[];
  next_cursor: string | null;
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
    type: str(data.type, 'text'),
    content: data.content,
    status: str(data.status, 'sent'),
    created_at: data.created_at,
  };
}

function Thread(props: { contact: Contact }) {
  const { contact } = props;
  const [messages, setMessages] = useState<Message[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<string | null>(null);
  const [draft, setDraft] = useState('');
  const [sendError, setSendError] = useState<string | null>(null);
  const [typing, setTyping] = useState(false);
  const typingTimer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  const lastTypingSent = useRef(0);
  const connection = useConnectionState();
  const listRef = useRef<HTMLDivElement>(null);

  const loadNewest = async () => {
    try {
      const page = await api<History>('GET', `/v1/messages?with=${encodeURIComponent(contact.id)}&limit=${PAGE}`);
      setMessages((current) => merge(current, page.messages));
      setCursor((current) => current ?? page.next_cursor);
      page.messages.forEach((m) => gateway.noteMessage(m.created_at));
      setError(null);
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setLoading(false);
    }
  };

  const loadOlder = async () => {
    if (!cursor) return;
    try {
      const page = await api<History>(
        'GET',
        `/v1/messages?with=${encodeURIComponent(contact.id)}&limit=${PAGE}&cursor=${encodeURIComponent(cursor)}`,
      );
      setMessages((current) => merge(current, page.messages));
      setCursor(page.next_cursor);
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  useEffect(() => {
    setMessages([]);
    setCursor(null);
    setLoading(true);
    void loadNewest();
  }, [contact.id]);

  const belongsHere = (m: Message, frame: GatewayFrame) =>
    m.direction === 'outbound'
      ? m.recipient_id === contact.id
      : m.sender_contact_id === contact.id && frame.data?.recipient_kind !== 'group';

  useGatewayEvents(
    ['message.created', 'message.delivered', 'message.read', 'typing', 'ready'],
    (frame) => {
      const data = frame.data ?? {};
      if (frame.type === 'ready') {
        // After a reconnect, fetch the newest page too: nothing missed, duplicates merge by id.
        void loadNewest();
      } else if (frame.type === 'message.created') {
        const message = asMessage(data);
        if (message && belongsHere(message, frame)) {
          setMessages((current) => merge(current, [message]));
          if (message.direction === 'inbound') setTyping(false);
        }
      } else if (frame.type === 'message.delivered' || frame.type === 'message.read') {
        const id = data.message_id;
        const receipt = frame.type === 'message.read' ? 'read' : 'delivered';
        setMessages((current) =>
          current.map((m) => (m.id === id && !(m.receipt === 'read' && receipt === 'delivered') ? { ...m, receipt } : m)),
        );
      } else if (frame.type === 'typing' && data.contact_id === contact.id) {
        if (data.recipient_kind === 'group') return;
        clearTimeout(typingTimer.current);
        const started = data.state !== 'stopped';
        setTyping(started);
        if (started) typingTimer.current = setTimeout(() => setTyping(false), 8_000);
      }
    },
    [contact.id],
  );

  // Tell the sender their messages were read: the inbound ones shown on this page.
  const unreadIds = messages.filter((m) => m.direction === 'inbound' && m.status !== 'read').map((m) => m.id);
  const reported = useRef(new Set<string>());
  useEffect(() => {
    const fresh = unreadIds.filter((id) => !reported.current.has(id)).slice(-100);
    if (fresh.length === 0 || connection !== 'open' || document.visibilityState === 'hidden') return;
    fresh.forEach((id) => reported.current.add(id));
    void gateway.send('message.read', { message_ids: fresh }, true).catch(() => fresh.forEach((id) => reported.current.delete(id)));
  }, [unreadIds.join(','), connection]);

  // Keep the newest message in view as messages arrive.
  const newestId = messages[messages.length - 1]?.id;
  useEffect(() => {
    const list = listRef.current;
    if (list) list.scrollTop = list.scrollHeight;
  }, [newestId]);

  const onDraft = (value: string) => {
    setDraft(value);
    const now = Date.now();
    if (value && now - lastTypingSent.current > 3_000) {
      lastTypingSent.current = now;
      void gateway.send('typing', { recipient_id: contact.id, state: 'started' });
    }
  };

  const send = async () => {
    const content = draft;
    if (!content.trim()) return;
    setSendError(null);
    const key = newIdempotencyKey();
    const placeholder: Message = {
      id: `pending-${key}`,
      direction: 'outbound',
      sender_contact_id: null,
      recipient_id: contact.id,
      type: 'text',
      content,
      status: 'sending',
      created_at: new Date().toISOString(),
      sending: true,
    };
    setMessages((current) => merge(current, [placeholder]));
    setDraft('');
    lastTypingSent.current = 0;
    void gateway.send('typing', { recipient_id: contact.id, state: 'stopped' });
    try {
      const sent = await api<{ id: string; status: string; created_at: string }>(
        'POST',
        '/v1/messages',
        { recipient_id: contact.id, content, type: 'text' },
        key,
      );
      gateway.noteMessage(sent.created_at);
      setMessages((current) =>
        merge(
          current.filter((m) => m.id !== placeholder.id),
          [{ ...placeholder, id: sent.id, status: sent.status, created_at: sent.created_at, sending: false }],
        ),
      );
    } catch (failure) {
      setMessages((current) => current.filter((m) => m.id !== placeholder.id));
      setDraft(content);
      setSendError(describeError(failure));
    }
  };

  return (
    <>
      {error && <Notice kind="error">{error}</Notice>}
      {connection !== 'open' && connection !== 'stopped' && (
        <p class="muted" role="status">
          {connection === 'connecting' ? 'Connecting to live updates…' : 'Offline: reconnecting…'}
        </p>
      )}
      {cursor && (
        <Button onClick={() => void loadOlder()} class="button button-secondary">
          Load older messages
        </Button>
      )}
      <div class="messages" ref={listRef} role="log" aria-live="polite" aria-label={`Messages with ${contact.name}`} tabIndex={0}>
        <ol class="message-list">
          {!loading && messages.length === 0 && <li class="muted">No messages yet. Say hello!</li>}
          {messages.map((m) => (
            <li key={m.id} class={`message message-${m.direction}`}>
              <span class="visually-hidden">{m.direction === 'outbound' ? 'You:' : `${contact.name}:`}</span>
              <p class="message-content">{m.content}</p>
              <p class="message-meta">
                <time dateTime={m.created_at}>{formatDate(m.created_at)}</time>
                {m.direction === 'outbound' && (
                  <>
                    {' · '}
                    <span class="receipt">
                      {m.sending ? 'Sending…' : m.receipt === 'read' ? 'Read' : m.receipt === 'delivered' ? 'Delivered' : 'Sent'}
                    </span>
                  </>
                )}
              </p>
            </li>
          ))}
        </ol>
      </div>
      <p class="typing" aria-live="polite">
        {typing ? `${contact.name} is typing…` : ''}
      </p>
      <form
        class="composer"
        onSubmit={(event) => {
          event.preventDefault();
          void send();
        }}
      >
        <label for="composer-input">Message to {contact.name}</label>
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
              void send();
            }
          }}
        />
        {sendError && <Notice kind="error">{sendError}</Notice>}
        <Button type="submit" variant="primary">
          Send
        </Button>
      </form>
    </>
  );
}

export function ConversationPage(props: { contactId: string }) {
  const contact = useResource(() => api<Contact>('GET', `/v1/contacts/${encodeURIComponent(props.contactId)}`), [props.contactId]);
  return (
    <Loaded resource={contact}>
      {(data) => (
        <>
          <PageTitle product={PRODUCT} actions={<PresenceBadge contactId={data.connected ? data.id : null} refreshIfUnknown />}>
            {data.name}
          </PageTitle>
          <p>
            <Link href="/contacts">Back to contacts</Link>
          </p>
          {!data.connected && (
            <Notice kind="info">
              {data.email
                ? `Your messages are kept here and reach ${data.name} if they use this service with ${data.email}. Once they add you back, you see when they are online and when they read your messages.`
                : `${data.name} has no email address, so your messages are kept here only: add the address they use this service with to reach them.`}
            </Notice>
          )}
          <Thread contact={data} />
        </>
      )}
    </Loaded>
  );
}
