import { Logger } from '@nestjs/common';
import { Client } from 'pg';

/** What a listener's owner may want to hear about its connection besides the notifications. */
export interface PgListenerEvents {
  /** The connection is up and LISTENing; called just before the `onWake()` of a (re)connect. */
  connected?: () => void;
  /** An established connection was lost (not called by `stop`); a reconnect follows after a second. */
  lost?: () => void;
}

/**
 * A dedicated PostgreSQL connection that LISTENs on one channel and calls
 * `onWake` with the payload of every notification, reconnecting after a second when the
 * connection is lost. After every (re)connect it calls `onWake` once, with no
 * payload, so whatever was committed while nobody listened is picked up.
 * The one LISTEN implementation of the service: the job relay, the event
 * dispatcher and the session cache each hold one.
 */
export class PgListener {
  private client: Client | null = null;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly databaseUrl: string,
    private readonly channel: string,
    private readonly onWake: (payload?: string) => void,
    private readonly logger: Logger,
    private readonly events: PgListenerEvents = {},
  ) {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`invalid LISTEN channel "${channel}"`);
  }

  /** Whether the connection is up and LISTENing. */
  get listening(): boolean {
    return this.client !== null;
  }

  async start(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({ connectionString: this.databaseUrl, keepAlive: true });
    // Each connection is given up once, whichever of 'error', 'end' or a failed connect comes first.
    let gone = false;
    const lost = (why: string) => {
      if (gone) return;
      gone = true;
      const wasListening = this.client === client;
      if (wasListening) this.client = null;
      void client.end().catch(() => undefined);
      if (this.stopped) return;
      this.logger.warn(`${this.channel} listener connection lost: ${why}`);
      if (wasListening) this.events.lost?.();
      this.retry();
    };
    client.on('notification', (message) => this.onWake(message.payload));
    client.on('error', (error) => lost(error.message));
    client.on('end', () => lost('connection closed'));
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
      if (gone) return;
      if (this.stopped) {
        gone = true;
        await client.end().catch(() => undefined);
        return;
      }
      this.client = client;
      this.events.connected?.();
      this.onWake();
    } catch (error) {
      if (gone) return;
      gone = true;
      this.logger.warn(`${this.channel} listener could not connect: ${(error as Error).message}`);
      await client.end().catch(() => undefined);
      this.retry();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private retry(): void {
    if (this.stopped || this.reconnectTimer) return;
    this.client = null;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      void this.start();
    }, 1000);
    this.reconnectTimer.unref();
  }
}
