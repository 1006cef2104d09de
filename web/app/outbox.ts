import { ApiFailure, describeError, idempotent, newIdempotencyKey, ok } from '../shared/api';
import { gateway } from './gateway';
import { api, session } from './session';

/**
 * Messages on their way out. A message the user sends is recorded here with
 * its idempotency key before the first attempt and stays until the service
 * has answered: while the service cannot be reached (network error, 5xx, 429)
 * it waits with a pending mark and is sent again, with the same key, when the
 * gateway is back (`ready`), when the browser is online again, or on a timer.
 * The service answers a repeated key with the message it already created, so
 * a request whose answer was lost never makes a second message. The queue is
 * kept in sessionStorage, so a reload does not lose what was typed.
 */
export interface OutgoingMessage {
  key: string;
  recipient_id: string;
  content: string;
  created_at: string;
  /** `waiting`: the service could not be reached; `failed`: it refused the message (shown with its reason). */
  state: 'sending' | 'waiting' | 'failed';
  error?: string;
  /** HTTP status of the refusal. */
  errorStatus?: number;
}

export interface SentMessage {
  id: string;
  status: string;
  created_at: string;
  recipient_id: string;
  content: string;
  type: string;
}

const STORAGE_KEY = 'soul.app.outbox';
const RETRY_DELAYS_MS = [1_000, 2_000, 4_000, 8_000];

function retryable(error: unknown): boolean {
  if (!(error instanceof ApiFailure)) return true;
  return error.status === 0 || error.status === 408 || error.status === 429 || error.status >= 500;
}

class Outbox {
  private items: OutgoingMessage[] = [];
  private readonly inFlight = new Set<string>();
  private readonly listeners = new Set<() => void>();
  private readonly sentListeners = new Set<(key: string, message: SentMessage) => void>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private attempt = 0;

  constructor() {
    try {
      const saved = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? '[]') as OutgoingMessage[];
      if (Array.isArray(saved)) this.items = saved.map((item) => (item.state === 'failed' ? item : { ...item, state: 'waiting' }));
    } catch {
      this.items = [];
    }
    gateway.on('ready', () => this.flush(true));
    window.addEventListener('online', () => this.flush(true));
    session.subscribe((value) => {
      if (value) this.flush(true);
      else this.clear();
    });
    if (this.items.length > 0) setTimeout(() => this.flush(true), 0);
  }

  list(recipientId?: string): OutgoingMessage[] {
    return recipientId ? this.items.filter((item) => item.recipient_id === recipientId) : [...this.items];
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Called once per message the service accepted, with the key it was queued under. */
  onSent(listener: (key: string, message: SentMessage) => void): () => void {
    this.sentListeners.add(listener);
    return () => this.sentListeners.delete(listener);
  }

  send(recipientId: string, content: string): OutgoingMessage {
    const item: OutgoingMessage = {
      key: newIdempotencyKey(),
      recipient_id: recipientId,
      content,
      created_at: new Date().toISOString(),
      state: 'sending',
    };
    this.items.push(item);
    this.changed();
    void this.deliver(item);
    return item;
  }

  /** Gives up on a message that was refused or is still waiting (the user chose to). */
  discard(key: string): void {
    this.items = this.items.filter((item) => item.key !== key);
    this.changed();
  }

  /** Tries a refused message again, with the same key. */
  retry(key: string): void {
    const item = this.items.find((candidate) => candidate.key === key);
    if (!item) return;
    this.update(key, { state: 'sending', error: undefined, errorStatus: undefined });
    void this.deliver(item);
  }

  /** Sends every waiting message now (`force`: also before the retry timer is due). */
  flush(force = false): void {
    if (!session.get()) return;
    if (force) {
      this.attempt = 0;
      if (this.timer) clearTimeout(this.timer);
      this.timer = null;
    }
    for (const item of this.items) if (item.state === 'waiting') void this.deliver(item);
  }

  private async deliver(item: OutgoingMessage): Promise<void> {
    if (this.inFlight.has(item.key) || !session.get()) return;
    this.inFlight.add(item.key);
    try {
      const sent = await ok(
        api.POST('/v1/messages', {
          body: { recipient_id: item.recipient_id, content: item.content, type: 'text' },
          headers: idempotent(item.key),
        }),
      );
      this.items = this.items.filter((candidate) => candidate.key !== item.key);
      this.attempt = 0;
      gateway.noteMessage(sent.created_at);
      // The service answered, so it is back: the live connection need not wait for its backoff.
      gateway.retryNow();
      const message: SentMessage = {
        id: sent.id,
        status: typeof sent.status === 'string' ? sent.status : 'sent',
        created_at: sent.created_at,
        recipient_id: item.recipient_id,
        content: item.content,
        type: 'text',
      };
      for (const listener of this.sentListeners) listener(item.key, message);
      this.changed();
    } catch (failure) {
      if (!this.items.some((candidate) => candidate.key === item.key)) return;
      if (retryable(failure)) {
        this.update(item.key, { state: 'waiting', error: undefined });
        this.scheduleRetry();
      } else {
        this.update(item.key, {
          state: 'failed',
          error: describeError(failure),
          errorStatus: failure instanceof ApiFailure ? failure.status : undefined,
        });
      }
    } finally {
      this.inFlight.delete(item.key);
    }
  }

  private scheduleRetry(): void {
    if (this.timer) return;
    const delay = RETRY_DELAYS_MS[Math.min(this.attempt++, RETRY_DELAYS_MS.length - 1)];
    this.timer = setTimeout(() => {
      this.timer = null;
      this.flush();
    }, delay);
  }

  private update(key: string, patch: Partial<OutgoingMessage>): void {
    this.items = this.items.map((item) => (item.key === key ? { ...item, ...patch } : item));
    this.changed();
  }

  private clear(): void {
    this.items = [];
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.changed();
  }

  private changed(): void {
    try {
      if (this.items.length > 0) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(this.items));
      else sessionStorage.removeItem(STORAGE_KEY);
    } catch {
      /* storage full or blocked: the queue still works in memory */
    }
    for (const listener of this.listeners) listener();
  }
}

export const outbox = new Outbox();
