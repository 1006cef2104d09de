import { AddressInfo } from 'node:net';
import { createServer, Server } from 'node:https';
import { IncomingHttpHeaders } from 'node:http';
import { testCertificate } from './test-ca';

export interface ReceivedWebhook {
  /** The request path (endpoints of one app may share the receiver on different paths). */
  path: string;
  headers: IncomingHttpHeaders;
  /** The exact bytes received. */
  raw: Buffer;
  body: Record<string, unknown>;
  at: number;
}

export interface ScriptedResponse {
  status: number;
  headers?: Record<string, string>;
  body?: string;
  delayMs?: number;
  /** Never answer: the request is read and left hanging until the service gives up. */
  hang?: boolean;
}

/**
 * A provider's webhook endpoint: real HTTPS on loopback with a certificate
 * from the local test CA. Answers scripted responses in order, then 200, and
 * records every request.
 */
export class WebhookReceiver {
  readonly received: ReceivedWebhook[] = [];
  private script: ScriptedResponse[] = [];
  fallback: ScriptedResponse = { status: 200, body: 'ok' };
  /** Answers from the request itself (a receiver that checks signatures, say), before the script; undefined passes on. */
  decide?: (request: ReceivedWebhook) => ScriptedResponse | undefined;
  url = '';

  private server!: Server;

  private constructor() {}

  static async start(): Promise<WebhookReceiver> {
    const tls = testCertificate('trusted');
    const receiver = new WebhookReceiver();
    const server = createServer(tls, (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
        } catch {
          /* recorded as is */
        }
        const received = { path: req.url ?? '', headers: req.headers, raw, body, at: Date.now() };
        receiver.received.push(received);
        const answer = receiver.decide?.(received) ?? receiver.script.shift() ?? receiver.fallback;
        if (answer.hang) return;
        const send = () => {
          if (res.destroyed) return;
          res.writeHead(answer.status, answer.headers ?? {});
          res.end(answer.body ?? '');
        };
        if (answer.delayMs) setTimeout(send, answer.delayMs);
        else send();
      });
    });
    receiver.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    receiver.url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    return receiver;
  }

  respondWith(...responses: ScriptedResponse[]): void {
    this.script.push(...responses);
  }

  reset(): void {
    this.script = [];
    this.fallback = { status: 200, body: 'ok' };
    this.decide = undefined;
  }

  of(eventId: string): ReceivedWebhook[] {
    return this.received.filter((r) => r.body.id === eventId);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
