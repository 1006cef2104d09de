import { randomUUID } from 'node:crypto';
import WebSocket from 'ws';
import { ApiError, ApiErrorCode, API_ERROR_STATUS } from '../../common/errors/api-error';
import type { AuthenticatedUser } from '../access/authenticated-user';
import { CLOSE, ServerFrame } from './gateway-protocol';

/**
 * Message ids a connection has met (sent itself or was shown), remembered so
 * it is never shown one twice: about the last minute of a busy conversation,
 * well beyond the durable copy's delay.
 */
const REMEMBERED_MESSAGES = 1_000;
/** Bus messages held during a session re-check (one database lookup); past this the socket is closed (1011) rather than held without bound. */
const MAX_HELD_MESSAGES = 1000;

export interface FrameBudget {
  framesPerSecond: number;
  frameBurst: number;
}

/** One authenticated socket on this api instance. */
export class GatewayConnection {
  readonly id = randomUUID();
  lastSeen = Date.now();
  /** Listeners this connection holds on the bus, by channel, so closing releases them all. */
  readonly listeners = new Map<string, (message: string) => void>();
  /** Work to stop when a channel is no longer listened to (lease renewal timers). */
  readonly stoppers = new Map<string, () => void>();
  readonly timers: NodeJS.Timeout[] = [];
  private readonly seen = new Set<string>();
  /** Re-checks of the session under way; while any runs, bus messages wait in `held` and frames wait in `settled`. */
  private checks = 0;
  private held: string[] = [];
  private settledWaiters: Array<() => void> = [];
  private tokens: number;
  private refilledAt = Date.now();
  private refusedInARow = 0;

  constructor(
    readonly socket: WebSocket,
    /** Replaced by each session re-check, so a tier change applies to an open socket. */
    public user: AuthenticatedUser,
    readonly expiresAt: Date,
    private readonly budget: FrameBudget,
  ) {
    this.tokens = budget.frameBurst;
  }

  get open(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  send(frame: ServerFrame): void {
    if (this.open) this.socket.send(JSON.stringify(frame));
  }

  error(code: ApiErrorCode, message: string, id?: string): void {
    this.send({ type: 'error', ...(id === undefined ? {} : { id }), data: { code, message, status: API_ERROR_STATUS[code] } });
  }

  fail(error: ApiError, id?: string): void {
    this.error(error.code, error.message, id);
  }

  close(code: number, reason: string): void {
    if (this.socket.readyState === WebSocket.OPEN || this.socket.readyState === WebSocket.CONNECTING) this.socket.close(code, reason);
  }

  /**
   * Token bucket of incoming frames. A frame over budget is refused with
   * `RATE_LIMITED`; a client that keeps sending through a whole burst of
   * refusals is not listening and is closed with 4429.
   */
  admit(): boolean {
    const now = Date.now();
    this.tokens = Math.min(this.budget.frameBurst, this.tokens + ((now - this.refilledAt) / 1000) * this.budget.framesPerSecond);
    this.refilledAt = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      this.refusedInARow = 0;
      return true;
    }
    this.refusedInARow += 1;
    if (this.refusedInARow > this.budget.frameBurst) this.close(CLOSE.ABUSE, 'frame rate limit exceeded');
    else this.error('RATE_LIMITED', `More than ${this.budget.framesPerSecond} frames per second; slow down`);
    return false;
  }

  /** A re-check of the session starts: until it ends, nothing from the bus reaches the socket, in case the session just ended. */
  beginCheck(): void {
    this.checks += 1;
  }

  /** A re-check ended; after the last one, returns the held bus messages (arrival order) for delivery and lets waiting frames go. */
  endCheck(): string[] {
    this.checks = Math.max(0, this.checks - 1);
    if (this.checks > 0) return [];
    const held = this.held;
    this.held = [];
    for (const resolve of this.settledWaiters.splice(0)) resolve();
    return held;
  }

  /** Keeps a bus message back while a re-check runs; false when none runs and it may be delivered now. */
  hold(message: string): boolean {
    if (this.checks === 0) return false;
    if (this.held.length < MAX_HELD_MESSAGES) this.held.push(message);
    else this.close(CLOSE.INTERNAL, 'internal error; reconnect later');
    return true;
  }

  /** Resolves when no re-check of the session is running. */
  settled(): Promise<void> {
    if (this.checks === 0) return Promise.resolve();
    return new Promise((resolve) => this.settledWaiters.push(resolve));
  }

  /**
   * True the first time this socket meets a message id (its own send, or a
   * `message.created` delivered to it), false after: the fast path and the
   * durable path both publish every message, and the socket shows it once.
   */
  firstSight(messageId: string): boolean {
    if (this.seen.has(messageId)) return false;
    this.seen.add(messageId);
    if (this.seen.size > REMEMBERED_MESSAGES) this.seen.delete(this.seen.values().next().value as string);
    return true;
  }
}
