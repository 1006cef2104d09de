import WebSocket from 'ws';
import { waitFor } from './wait-for';

export interface Frame {
  type: string;
  id?: string;
  data: Record<string, unknown>;
}

/** A gateway test client: keeps every frame and how the socket closed; every wait is bounded. */
export class GatewayClient {
  /** Frames not yet taken by `next`. */
  readonly frames: Frame[] = [];
  /** Every frame received, also those `next` took. */
  readonly seen: Frame[] = [];
  closedWith: { code: number; reason: string } | undefined;

  constructor(readonly socket: WebSocket) {
    socket.on('message', (data) => {
      const frame = JSON.parse((data as Buffer).toString()) as Frame;
      this.frames.push(frame);
      this.seen.push(frame);
    });
    socket.on('error', () => undefined);
    socket.once('close', (code, reason) => (this.closedWith = { code, reason: reason.toString() }));
  }

  /** Opens `/v1/gateway` on an api instance with `token` and waits for `ready`. */
  static async open(baseUrl: string, token: string): Promise<GatewayClient> {
    const client = new GatewayClient(new WebSocket(`${baseUrl.replace(/^http/, 'ws')}/v1/gateway?token=${encodeURIComponent(token)}`));
    await client.next('ready');
    return client;
  }

  /** Ends every client still open or opening, then lets the servers see the closes (so presence does not leak into the next test). */
  static async terminateAll(clients: GatewayClient[]): Promise<void> {
    for (const client of clients.splice(0)) {
      if (client.socket.readyState === WebSocket.OPEN || client.socket.readyState === WebSocket.CONNECTING) client.socket.terminate();
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  send(frame: Record<string, unknown>): void {
    this.socket.send(JSON.stringify(frame));
  }

  /** Takes the first frame of `type` (matching `where`), waiting for it at most `timeoutMs`. */
  async next(type: string, where: (frame: Frame) => boolean = () => true, timeoutMs = 5000): Promise<Frame> {
    return waitFor(
      () => {
        const index = this.frames.findIndex((f) => f.type === type && where(f));
        return index >= 0 ? this.frames.splice(index, 1)[0] : undefined;
      },
      { timeoutMs, what: `a ${type} frame (got ${JSON.stringify(this.frames.map((f) => f.type))})` },
    );
  }

  /** Frames of `type` (matching `where`) received and not taken. */
  of(type: string, where: (frame: Frame) => boolean = () => true): Frame[] {
    return this.frames.filter((frame) => frame.type === type && where(frame));
  }

  /** Frames of `type` not taken, after `ms` for stragglers. */
  async pending(type: string, ms = 300): Promise<Frame[]> {
    await new Promise((r) => setTimeout(r, ms));
    return this.of(type);
  }

  /** Asserts that no frame of `type` (matching `where`) arrives within `ms`. */
  async none(type: string, where: (frame: Frame) => boolean = () => true, ms = 400): Promise<void> {
    await new Promise((r) => setTimeout(r, ms));
    expect(this.of(type, where)).toEqual([]);
  }

  /** Proves the socket is open and served: a ping is answered. */
  async answersPing(id: string): Promise<void> {
    this.send({ type: 'ping', id });
    await this.next('pong', (frame) => frame.id === id);
    expect(this.closedWith).toBeUndefined();
  }

  /** How the socket closed, waited for at most `timeoutMs`. */
  async closed(timeoutMs = 10_000): Promise<{ code: number; reason: string }> {
    return waitFor(() => this.closedWith, { timeoutMs, what: 'the socket to close' });
  }

  close(): void {
    this.socket.close();
  }
}
