import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, describeError, ok, type Schemas } from '../shared/api';
import { navigate } from '../shared/router';
import { refreshTitle, setTitleDecorator } from '../shared/ui';
import { gateway, GatewayFrame } from './gateway';
import { api } from './session';

/**
 * The user's conversations (people and groups) with their unread counts,
 * kept live from the gateway: loaded from `GET /v1/conversations` at every
 * `ready` (so a reconnect starts from the service's truth), then moved and
 * counted as `message.created` frames arrive. The conversation on screen is
 * not counted. The total is shown in the document title, and a browser
 * notification is raised for a message to a conversation that is not open,
 * once the user has allowed it with the button on the inbox.
 */
/** As the list answers it, or built from a `message.created` frame (whose `type` is taken as it comes). */
export type LastMessage = Omit<Schemas['ConversationLastMessageDto'], 'type'> & { type: string };

/** As `GET /v1/conversations` lists it; frames move it and count `unread` here between two loads. */
export type Conversation = Omit<Schemas['ConversationDto'], 'last_message'> & { last_message: LastMessage | null };

export interface InboxState {
  conversations: Conversation[];
  loaded: boolean;
  /** False when the service has no conversations list (an older API): the inbox then says so. */
  available: boolean;
  error: string | null;
}

const NOTIFY_KEY = 'soul.app.notifications';

/** The conversation id a message frame belongs to, from the viewer's side: a group, or the contact on the other end. */
export function conversationOf(data: Record<string, unknown>): string | null {
  if (data.recipient_kind === 'group' || typeof data.group_id === 'string') {
    return typeof data.group_id === 'string' ? data.group_id : typeof data.recipient_id === 'string' ? data.recipient_id : null;
  }
  if (data.direction === 'outbound') return typeof data.recipient_id === 'string' ? data.recipient_id : null;
  return typeof data.sender_contact_id === 'string' ? data.sender_contact_id : null;
}

class Inbox {
  state: InboxState = { conversations: [], loaded: false, available: true, error: null };
  private openId: string | null = null;
  private readonly listeners = new Set<(state: InboxState) => void>();
  private readonly counted = new Set<string>();
  private reloadTimer: ReturnType<typeof setTimeout> | null = null;
  private generation = 0;

  constructor() {
    gateway.on('ready', () => void this.load());
    gateway.on('message.created', (frame) => this.onMessage(frame));
    gateway.on('group.updated', (frame) => this.onGroupUpdated(frame));
    gateway.onState((state) => {
      if (state === 'stopped') this.reset();
    });
    setTitleDecorator((title) => {
      const total = this.totalUnread();
      return total > 0 ? `(${total}) ${title}` : title;
    });
  }

  subscribe(listener: (state: InboxState) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  totalUnread(): number {
    return this.state.conversations.reduce((sum, c) => sum + (c.unread > 0 ? c.unread : 0), 0);
  }

  find(id: string): Conversation | undefined {
    return this.state.conversations.find((c) => c.id === id);
  }

  async load(): Promise<void> {
    const mine = ++this.generation;
    try {
      const page = await ok(api.GET('/v1/conversations', { params: { query: { limit: 100 } } }));
      if (mine !== this.generation) return;
      const conversations = (Array.isArray(page?.conversations) ? page.conversations : []).map((c) =>
        c.id === this.openId && document.visibilityState !== 'hidden' ? { ...c, unread: 0 } : c,
      );
      this.set({ conversations, loaded: true, available: true, error: null });
    } catch (failure) {
      if (mine !== this.generation) return;
      if (failure instanceof ApiFailure && (failure.status === 404 || failure.status === 405)) {
        this.set({ ...this.state, loaded: true, available: false, error: null });
      } else this.set({ ...this.state, loaded: true, error: describeError(failure) });
    }
  }

  /** The conversation on screen: its messages are read as they arrive, so they are not counted. */
  setOpen(id: string | null): void {
    this.openId = id;
    if (id) this.markRead(id);
  }

  markRead(id: string): void {
    const conversation = this.find(id);
    if (!conversation || conversation.unread === 0) return;
    this.set({ ...this.state, conversations: this.state.conversations.map((c) => (c.id === id ? { ...c, unread: 0 } : c)) });
  }

  notificationsEnabled(): boolean {
    return typeof Notification !== 'undefined' && Notification.permission === 'granted' && localStorage.getItem(NOTIFY_KEY) === 'on';
  }

  /** Asks the browser for permission (only ever from the user's click) and remembers the choice. */
  async enableNotifications(): Promise<NotificationPermission | 'unsupported'> {
    if (typeof Notification === 'undefined') return 'unsupported';
    const permission = Notification.permission === 'granted' ? 'granted' : await Notification.requestPermission();
    if (permission === 'granted') localStorage.setItem(NOTIFY_KEY, 'on');
    this.preferenceChanged();
    return permission;
  }

  disableNotifications(): void {
    localStorage.removeItem(NOTIFY_KEY);
    this.preferenceChanged();
  }

  /**
   * The notification preference lives in localStorage, not in the state: a new
   * state object makes subscribers render again (Preact skips a `setState` with
   * the same object, so emitting the old one left the switch as it was).
   */
  private preferenceChanged(): void {
    this.set({ ...this.state });
  }

  private onMessage(frame: GatewayFrame): void {
    const data = frame.data ?? {};
    if (typeof data.id !== 'string' || typeof data.content !== 'string' || typeof data.created_at !== 'string') return;
    const id = conversationOf(data);
    const existing = id ? this.find(id) : undefined;
    // A new conversation, a sender the user has not added, or a message replayed (a sync after a reconnect, or the
    // durable copy, which an earlier page load may have shown and read already): the service's list is the truth.
    if (!id || !existing || frame.replayed || data.replayed === true) {
      this.scheduleReload();
      return;
    }
    if (this.counted.has(data.id)) return;
    this.counted.add(data.id);
    if (this.counted.size > 2_000) this.counted.clear();
    const inbound = data.direction === 'inbound';
    const onScreen = id === this.openId && document.visibilityState !== 'hidden';
    const last: LastMessage = {
      id: data.id,
      content: data.content,
      type: typeof data.type === 'string' ? data.type : 'text',
      created_at: data.created_at,
      direction: inbound ? 'inbound' : 'outbound',
    };
    const name = existing.kind === 'group' && typeof data.group_name === 'string' ? data.group_name : existing.name;
    const updated: Conversation = {
      ...existing,
      name,
      last_message: !existing.last_message || existing.last_message.created_at <= last.created_at ? last : existing.last_message,
      unread: inbound && !onScreen ? existing.unread + 1 : existing.unread,
    };
    this.set({ ...this.state, conversations: [updated, ...this.state.conversations.filter((c) => c.id !== id)].sort(byLastMessage) });
    if (inbound && id !== this.openId) this.notify(updated, data.content);
  }

  private onGroupUpdated(frame: GatewayFrame): void {
    const data = frame.data ?? {};
    if (typeof data.group_id !== 'string') return;
    const name = typeof data.name === 'string' ? data.name : null;
    if (!this.find(data.group_id)) {
      this.scheduleReload();
      return;
    }
    if (name)
      this.set({ ...this.state, conversations: this.state.conversations.map((c) => (c.id === data.group_id ? { ...c, name } : c)) });
  }

  private notify(conversation: Conversation, content: string): void {
    if (!this.notificationsEnabled()) return;
    try {
      const notification = new Notification(conversation.name, {
        body: content.length > 140 ? `${content.slice(0, 139)}…` : content,
        tag: conversation.id,
      });
      notification.onclick = () => {
        window.focus();
        navigate(conversation.kind === 'group' ? `/groups/${conversation.id}` : `/contacts/${conversation.id}`);
        notification.close();
      };
    } catch {
      /* some browsers only allow notifications from a service worker: the unread count still shows it */
    }
  }

  private scheduleReload(): void {
    if (this.reloadTimer) return;
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = null;
      void this.load();
    }, 300);
  }

  private reset(): void {
    this.generation += 1;
    this.counted.clear();
    this.openId = null;
    this.set({ conversations: [], loaded: false, available: true, error: null });
  }

  private set(state: InboxState): void {
    this.state = state;
    this.emit();
  }

  private emit(): void {
    refreshTitle();
    for (const listener of this.listeners) listener(this.state);
  }
}

function byLastMessage(a: Conversation, b: Conversation): number {
  const at = a.last_message?.created_at ?? '';
  const bt = b.last_message?.created_at ?? '';
  return at < bt ? 1 : at > bt ? -1 : 0;
}

export const inbox = new Inbox();

export function useInbox(): InboxState {
  const [state, setState] = useState(inbox.state);
  useEffect(() => {
    const off = inbox.subscribe(setState);
    setState(inbox.state);
    return off;
  }, []);
  return state;
}

/** Marks a conversation as the one on screen while the calling page is shown (and again when the tab becomes visible). */
export function useOpenConversation(id: string | null): void {
  useEffect(() => {
    inbox.setOpen(id);
    const visible = () => {
      if (document.visibilityState === 'visible' && id) inbox.markRead(id);
    };
    document.addEventListener('visibilitychange', visible);
    return () => {
      document.removeEventListener('visibilitychange', visible);
      inbox.setOpen(null);
    };
  }, [id]);
}
