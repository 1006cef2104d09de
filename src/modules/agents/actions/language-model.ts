import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '../../../config/config.module';
import type { AppConfig } from '../../../config/app-config';

export interface ChatMessage {
  role: 'system' | 'user';
  content: string;
}

/** A model that takes longer than this is treated as down; the built-in composer answers instead. */
export const LANGUAGE_MODEL_TIMEOUT_MS = 10_000;
const MAX_ANSWER_LENGTH = 20_000;

/**
 * The optional OpenAI-compatible chat completions endpoint (`AGENT_LLM_URL`).
 * Every failure (timeout, refused connection, non-2xx, unexpected JSON, empty
 * answer) yields null so callers fall back to their deterministic path. Logs
 * carry the host and the failure kind only: never the key nor the prompt.
 */
@Injectable()
export class AgentLanguageModel {
  private readonly logger = new Logger(AgentLanguageModel.name);

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  get configured(): boolean {
    return this.config.agentLlm.url !== undefined;
  }

  async complete(messages: ChatMessage[], timeoutMs = LANGUAGE_MODEL_TIMEOUT_MS): Promise<string | null> {
    const { url: configured, model, apiKey } = this.config.agentLlm;
    if (!configured) return null;
    const url = chatCompletionsUrl(configured);
    const host = new URL(url).host;
    const startedAt = Date.now();
    try {
      const response = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        },
        body: JSON.stringify({ model, messages }),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      });
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        this.logger.warn({ host, status: response.status }, 'language model answered with an error; using the built-in composer');
        return null;
      }
      const content = readContent(await response.json());
      if (content === null) {
        this.logger.warn({ host }, 'language model answer has no choices[0].message.content; using the built-in composer');
        return null;
      }
      this.logger.debug({ host, model, ms: Date.now() - startedAt }, 'language model answered');
      return content.slice(0, MAX_ANSWER_LENGTH);
    } catch (error) {
      const kind = error instanceof Error ? (error.name === 'TimeoutError' ? 'timeout' : error.name) : 'unknown';
      this.logger.warn({ host, failure: kind, ms: Date.now() - startedAt }, 'language model unreachable; using the built-in composer');
      return null;
    }
  }
}

/**
 * `AGENT_LLM_URL` may name the endpoint itself or, as OpenAI-compatible servers
 * document their base URL (Ollama: `http://127.0.0.1:11434/v1`), the API root.
 */
export function chatCompletionsUrl(configured: string): string {
  const trimmed = configured.replace(/\/+$/, '');
  return /\/chat\/completions$/.test(trimmed) ? trimmed : `${trimmed}/chat/completions`;
}

function readContent(body: unknown): string | null {
  const choices = (body as { choices?: unknown } | null)?.choices;
  if (!Array.isArray(choices) || choices.length === 0) return null;
  const content = (choices[0] as { message?: { content?: unknown } } | null)?.message?.content;
  return typeof content === 'string' && content.trim() !== '' ? content.trim() : null;
}
