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

  /** How the server closed the socket, waited for at most `timeoutMs`. */
  async closed(timeoutMs = 5000): Promise<{ code: number; reason: string }> {
    return waitFor(() => this.closedWith, { timeoutMs, what: 'the server to close the socket' });
  }

  close(): void {
    this.socket.close();
  }
}
