import { Logger } from '@nestjs/common';
import { Client } from 'pg';

/**
 * A dedicated PostgreSQL connection that LISTENs on one channel and calls
 * `onWake` with the payload of every notification, reconnecting after a second when the
 * connection is lost. After every (re)connect it calls `onWake` once, so
 * whatever was committed while nobody listened is picked up.
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
  ) {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`invalid LISTEN channel "${channel}"`);
  }

  async start(): Promise<void> {
    if (this.stopped) return;
    const client = new Client({ connectionString: this.databaseUrl });
    client.on('notification', (message) => this.onWake(message.payload));
    client.on('error', (error) => {
      this.logger.warn(`${this.channel} listener connection lost: ${error.message}`);
      void client.end().catch(() => undefined);
      this.retry();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.channel}`);
      this.client = client;
      this.onWake();
    } catch (error) {
      this.logger.warn(`${this.channel} listener could not connect: ${(error as Error).message}`);
      await client.end().catch(() => undefined);
      this.retry();
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.reconnectTimer) clearTimeout(this.reconnectTimer);
    await this.client?.end().catch(() => undefined);
    this.client = null;
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
