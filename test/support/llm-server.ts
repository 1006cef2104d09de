import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import { AddressInfo } from 'node:net';

export interface ChatCompletionRequest {
  model: string;
  messages: Array<{ role: string; content: string }>;
  [key: string]: unknown;
}

export interface RecordedLlmRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: ChatCompletionRequest;
}

type Behaviour =
  | { kind: 'answer'; content: (request: ChatCompletionRequest) => string }
  | { kind: 'status'; status: number }
  | { kind: 'raw'; body: string };

/**
 * A real OpenAI-compatible chat completions endpoint on loopback
 * (`POST /v1/chat/completions`). It records every request so tests can check
 * what the service sent, and can be told to answer, fail or talk nonsense.
 */
export class TestLlmServer {
  readonly requests: RecordedLlmRequest[] = [];
  /** The chat completions endpoint itself. */
  url = '';
  /** The API root, as OpenAI-compatible servers document it (Ollama: `http://127.0.0.1:11434/v1`). */
  baseUrl = '';
  private server: Server;
  private behaviour: Behaviour = { kind: 'answer', content: () => 'Hello from the language model.' };

  static async start(): Promise<TestLlmServer> {
    const llm = new TestLlmServer();
    llm.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        let body: ChatCompletionRequest;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ChatCompletionRequest;
        } catch {
          res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'invalid JSON' } }));
          return;
        }
        llm.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
        if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
          res.writeHead(404).end();
          return;
        }
        const behaviour = llm.behaviour;
        if (behaviour.kind === 'status') {
          res
            .writeHead(behaviour.status, { 'content-type': 'application/json' })
            .end(JSON.stringify({ error: { message: 'model is down' } }));
          return;
        }
        if (behaviour.kind === 'raw') {
          res.writeHead(200, { 'content-type': 'application/json' }).end(behaviour.body);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            id: `chatcmpl-${llm.requests.length}`,
            object: 'chat.completion',
            created: Math.floor(Date.now() / 1000),
            model: body.model,
            choices: [{ index: 0, message: { role: 'assistant', content: behaviour.content(body) }, finish_reason: 'stop' }],
            usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => llm.server.listen(0, '127.0.0.1', resolve));
    llm.baseUrl = `http://127.0.0.1:${(llm.server.address() as AddressInfo).port}/v1`;
    llm.url = `${llm.baseUrl}/chat/completions`;
    return llm;
  }

  /** Answers every request with this content (a function sees the request). */
  answerWith(content: string | ((request: ChatCompletionRequest) => string)): void {
    this.behaviour = { kind: 'answer', content: typeof content === 'string' ? () => content : content };
  }

  /** Answers every request with this HTTP status and an error body. */
  failWith(status: number): void {
    this.behaviour = { kind: 'status', status };
  }

  /** Answers 200 with this body verbatim (for malformed answers). */
  answerRaw(body: string): void {
    this.behaviour = { kind: 'raw', body };
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
