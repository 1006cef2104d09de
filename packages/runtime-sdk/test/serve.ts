import { createServer, RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { AnswerBody } from '../src/testing';

/** A real HTTP server on a loopback port for one listener; `close` drops open connections (streams) too. */
export async function serve(listener: RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** POSTs a JSON body (exact text) and answers the status and parsed JSON. */
export async function post(
  url: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; body: AnswerBody; headers: Headers }> {
  const response = await fetch(url, { method: 'POST', headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: response.status, body: (await response.json()) as AnswerBody, headers: response.headers };
}
