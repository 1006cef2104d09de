import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** What the server does with one request: answer it, or drop the connection without an answer. */
export type Answer = { status: number; headers?: Record<string, string>; body?: unknown } | 'drop';

/**
 * A real HTTP server on 127.0.0.1 that answers from a script (one handler for every request) and records what
 * it received, so the client's retries, headers and parsing meet real sockets.
 */
export class ScriptedServer {
  readonly received: Received[] = [];
  url = '';
  private handler: (request: Received, index: number) => Answer = () => ({ status: 404 });

  private constructor(private readonly server: Server) {}

  static async start(): Promise<ScriptedServer> {
    const server = createServer();
    const scripted = new ScriptedServer(server);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => scripted.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    scripted.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return scripted;
  }

  answer(handler: (request: Received, index: number) => Answer): void {
    this.received.length = 0;
    this.handler = handler;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const received = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() };
      this.received.push(received);
      const answer = this.handler(received, this.received.length - 1);
      if (answer === 'drop') {
        req.socket.destroy();
        return;
      }
      const json = answer.body === undefined ? '' : JSON.stringify(answer.body);
      res.writeHead(answer.status, { ...(json ? { 'content-type': 'application/json' } : {}), ...answer.headers });
      res.end(json);
    });
  }
}
