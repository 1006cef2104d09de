import { useEffect, useState } from 'preact/hooks';

/**
 * The client of the real-time gateway (`/v1/gateway?token=…`, docs/events.md):
 * one WebSocket per signed-in page, reconnected with capped exponential
 * backoff and jitter, resuming with `since` (the `created_at` of the newest
 * message seen) so nothing sent while offline is missed. Pages subscribe to
 * event types with `on`; presence of mutual contacts (by the user's own
 * contact id for them: the server never names other users by their user id)
 * and realtime capability subscriptions are kept here so they survive reconnects.
 */
export interface GatewayFrame {
  type: string;
  id?: string;
  data?: Record<string, unknown>;
  replayed?: boolean;
}

export type ConnectionState = 'connecting' | 'open' | 'offline' | 'stopped';
type Handler = (frame: GatewayFrame) => void;

const BASE_DELAY_MS = 1_000;
const MAX_DELAY_MS = 30_000;

export class GatewayClient {
  private socket: WebSocket | null = null;
  private retiring: WebSocket | null = null;
  private token: string | null = null;
  private attempts = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private since: string | null = null;
  private sequence = 0;
  private readonly handlers = new Map<string, Set<Handler>>();
  private readonly stateListeners = new Set<(state: ConnectionState) => void>();
  private readonly pending = new Map<string, { resolve: (frame: GatewayFrame) => void; reject: (error: Error) => void }>();
  private readonly capabilitySubscriptions = new Map<string, { install_id: string; capability: string; count: number }>();
  readonly presence = new Map<string, string>();
  state: ConnectionState = 'stopped';

  /** Called when the server refuses the token (4401) or the account is gone (4403): the page signs out. */
  onUnauthorized: (() => void) | null = null;

  start(token: string): void {
    if (this.token === token && this.state !== 'stopped') return;
    this.stop();
    this.token = token;
    this.attempts = 0;
    this.connect();
  }

  stop(): void {
    this.token = null;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const socket = this.socket;
    this.socket = null;
    socket?.close(1000, 'signed out');
    this.retiring?.close(1000, 'signed out');
    this.retiring = null;
    this.presence.clear();
    this.since = null;
    this.setState('stopped');
  }

  /**
   * Connects again at once. The server lists presence only for contacts that
   * were mutual when the socket connected, so a page that sees a new mutual
   * contact asks for a fresh `ready`.
   */
  refresh(): void {
    if (!this.token) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // The old socket stays open until the new one is ready, so the user never looks offline to others.
    this.retiring = this.socket;
    this.connect();
  }

  /**
   * Tries to connect now instead of at the end of the backoff: the service has
   * just answered a request (it is back), or the browser is online again.
   */
  retryNow(): void {
    if (!this.token || this.state !== 'offline' || !this.timer) return;
    clearTimeout(this.timer);
    this.timer = null;
    this.connect();
  }

  /** Whether the last `ready` listed this contact as a mutual one. */
  knowsPresenceOf(contactId: string): boolean {
    return this.presence.has(contactId);
  }

  on(type: string, handler: Handler): () => void {
    let set = this.handlers.get(type);
    if (!set) this.handlers.set(type, (set = new Set()));
    set.add(handler);
    return () => set.delete(handler);
  }

  onState(listener: (state: ConnectionState) => void): () => void {
    this.stateListeners.add(listener);
    return () => this.stateListeners.delete(listener);
  }

  /** Sends a frame; with `expectAnswer` resolves with its `ack` (or rejects with its `error`). */
  send(type: string, data?: Record<string, unknown>, expectAnswer = false): Promise<GatewayFrame | null> {
    const socket = this.socket;
    if (!socket || socket.readyState !== WebSocket.OPEN) return Promise.resolve(null);
    const frame: GatewayFrame = { type, ...(data ? { data } : {}) };
    if (!expectAnswer) {
      socket.send(JSON.stringify(frame));
      return Promise.resolve(null);
    }
    frame.id = `c-${++this.sequence}`;
    const id = frame.id;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      socket.send(JSON.stringify(frame));
      setTimeout(() => {
        if (this.pending.delete(id)) reject(new Error(`No answer to ${type}`));
      }, 10_000);
    });
  }

  /** Keeps a realtime capability subscribed (again after every reconnect) until the returned function is called. */
  subscribeCapability(installId: string, capability: string): () => void {
    const key = `${installId}:${capability}`;
    const existing = this.capabilitySubscriptions.get(key);
    if (existing) existing.count += 1;
    else {
      this.capabilitySubscriptions.set(key, { install_id: installId, capability, count: 1 });
      void this.send('capability.subscribe', { install_id: installId, capability }, true).catch(() => undefined);
    }
    return () => {
      const entry = this.capabilitySubscriptions.get(key);
      if (!entry) return;
      entry.count -= 1;
      if (entry.count > 0) return;
      this.capabilitySubscriptions.delete(key);
      void this.send('capability.unsubscribe', { install_id: installId, capability }, true).catch(() => undefined);
    };
  }

  /** Remembers the newest message instant, the `since` of the next reconnect. */
  noteMessage(createdAt: unknown): void {
    if (typeof createdAt === 'string' && (!this.since || createdAt > this.since)) this.since = createdAt;
  }

  private connect(): void {
    if (!this.token) return;
    this.setState('connecting');
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    const query = new URLSearchParams({ token: this.token });
    if (this.since) query.set('since', this.since);
    const socket = new WebSocket(`${scheme}//${location.host}/v1/gateway?${query.toString()}`);
    this.socket = socket;
    socket.onmessage = (event) => {
      if (this.socket !== socket || typeof event.data !== 'string') return;
      let frame: GatewayFrame;
      try {
        frame = JSON.parse(event.data) as GatewayFrame;
      } catch {
        return;
      }
      if (!frame || typeof frame.type !== 'string') return;
      this.receive(frame);
    };
    socket.onclose = (event) => {
      if (this.retiring === socket) this.retiring = null;
      if (this.socket !== socket) return;
      this.socket = null;
      for (const [id, waiter] of this.pending) {
        waiter.reject(new Error('Connection closed'));
        this.pending.delete(id);
      }
      if (event.code === 4401 || event.code === 4403) {
        this.setState('stopped');
        this.onUnauthorized?.();
        return;
      }
      if (!this.token) {
        this.setState('stopped');
        return;
      }
      this.setState('offline');
      this.scheduleReconnect(event.code === 4429 ? 5 : 0);
    };
  }

  private scheduleReconnect(extraAttempts: number): void {
    const attempt = this.attempts++ + extraAttempts;
    const ceiling = Math.min(MAX_DELAY_MS, BASE_DELAY_MS * 2 ** attempt);
    // Full jitter: many clients dropped together do not come back together.
    const delay = Math.max(250, Math.random() * ceiling);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.connect();
    }, delay);
  }

  private receive(frame: GatewayFrame): void {
    const data = frame.data ?? {};
    if (frame.id && (frame.type === 'ack' || frame.type === 'error' || frame.type === 'pong')) {
      const waiter = this.pending.get(frame.id);
      if (waiter) {
        this.pending.delete(frame.id);
        if (frame.type === 'error') waiter.reject(new Error(typeof data.message === 'string' ? data.message : 'Gateway error'));
        else waiter.resolve(frame);
      }
    }
    if (frame.type === 'ready') {
      this.attempts = 0;
      this.retiring?.close(1000, 'replaced');
      this.retiring = null;
      // Resume from here after a drop even when no message has arrived yet (a little earlier, for clock skew; ids de-duplicate).
      if (!this.since) this.since = new Date(Date.now() - 5_000).toISOString();
      this.presence.clear();
      const list = Array.isArray(data.presence) ? data.presence : [];
      for (const entry of list as Array<Record<string, unknown>>) {
        if (entry && typeof entry.contact_id === 'string' && typeof entry.status === 'string')
          this.presence.set(entry.contact_id, entry.status);
      }
      for (const sub of this.capabilitySubscriptions.values()) {
        void this.send('capability.subscribe', { install_id: sub.install_id, capability: sub.capability }, true).catch(() => undefined);
      }
      this.setState('open');
    }
    if (frame.type === 'presence.updated' && typeof data.contact_id === 'string' && typeof data.status === 'string') {
      this.presence.set(data.contact_id, data.status);
    }
    if (frame.type === 'message.created') this.noteMessage(data.created_at);
    if (frame.type === 'sync.complete' && data.more === true && typeof data.until === 'string') {
      void this.send('sync', { since: data.until });
    }
    for (const handler of this.handlers.get(frame.type) ?? []) handler(frame);
    for (const handler of this.handlers.get('*') ?? []) handler(frame);
  }

  private setState(state: ConnectionState): void {
    this.state = state;
    for (const listener of this.stateListeners) listener(state);
  }
}

export const gateway = new GatewayClient();
window.addEventListener('online', () => gateway.retryNow());

/** Re-renders on every frame of the given types; returns nothing (read state from `gateway`). */
export function useGatewayEvents(types: string[], handler: (frame: GatewayFrame) => void, deps: unknown[]): void {
  useEffect(() => {
    const offs = types.map((type) => gateway.on(type, handler));
    return () => offs.forEach((off) => off());
  }, deps);
}

export function useConnectionState(): ConnectionState {
  const [state, setState] = useState(gateway.state);
  useEffect(() => {
    const off = gateway.onState(setState);
    // The state may have changed between the first render and this subscription (a fast `ready`): without this the
    // page kept showing "Connecting…" under a "Live" badge until the next change.
    setState(gateway.state);
    return off;
  }, []);
  return state;
}

/**
 * The presence of the person behind one of the user's contacts, live (only a
 * `connected` contact has any). With `refreshIfUnknown` (a conversation page),
 * a connected contact that the last `ready` did not list, who became mutual
 * since, makes the gateway connect again once so their presence is known.
 */
export function usePresence(contactId: string | null | undefined, refreshIfUnknown = false): string | null {
  const current = () => (!contactId ? null : gateway.state === 'open' ? (gateway.presence.get(contactId) ?? null) : 'unknown');
  const [status, setStatus] = useState<string | null>(current);
  useEffect(() => {
    if (!contactId) return;
    let refreshed = false;
    const refresh = () => {
      // While the connection is down nobody's presence is known: the last status seen may be long out of date.
      setStatus(current());
      if (refreshIfUnknown && !refreshed && gateway.state === 'open' && !gateway.knowsPresenceOf(contactId)) {
        refreshed = true;
        gateway.refresh();
      }
    };
    refresh();
    const offs = [gateway.on('presence.updated', refresh), gateway.on('ready', refresh), gateway.onState(refresh)];
    return () => offs.forEach((off) => off());
  }, [contactId, refreshIfUnknown]);
  return status;
}
