import { ApiFailure, type FieldError } from '@soul-service/api-client';
import { CommandError, UsageError, type Io } from './command';

/**
 * Everything a command shows. Human mode writes lines for people; JSON mode (`--json`, implied in CI and when
 * stdin is not a terminal) writes one JSON document on stdout per command, or one per line for a stream
 * (`logs tail`), and errors as one JSON document on stderr. Notes meant for people go to stderr in both modes,
 * so stdout stays machine-readable.
 */
export class Output {
  constructor(
    private readonly io: Io,
    readonly json: boolean,
  ) {}

  /** The command's result: the document in JSON mode, the text otherwise. */
  result(document: unknown, text: string | string[]): void {
    if (this.json) this.io.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
    else this.io.stdout.write(lines(text));
  }

  /** One item of a stream: a compact JSON line, or a text line. */
  item(document: unknown, text: string): void {
    this.io.stdout.write(this.json ? `${JSON.stringify(document)}\n` : `${text}\n`);
  }

  /** A note for the person at the terminal (progress, where a file went); never on stdout. */
  note(text: string): void {
    if (!this.json) this.io.stderr.write(`${text}\n`);
  }

  /** Reports an error the way the mode asks; the caller chooses the exit code. */
  error(error: unknown): void {
    const document = errorDocument(error);
    if (this.json) {
      this.io.stderr.write(`${JSON.stringify({ error: document })}\n`);
      return;
    }
    const text = [`Error: ${document.detail}${error instanceof UsageError ? '' : ` (${document.code})`}`];
    for (const field of document.field_errors ?? []) text.push(`  ${field.field || '(body)'}: ${field.message}`);
    if (document.hint) text.push(document.hint);
    if (document.request_id) text.push(`Request id: ${document.request_id}`);
    this.io.stderr.write(lines(text));
  }
}

function lines(text: string | string[]): string {
  const all = Array.isArray(text) ? text : [text];
  return all.length === 0 ? '' : `${all.join('\n')}\n`;
}

/** An error as `--json` writes it on stderr (under `error`). */
export interface ErrorDocument {
  code: string;
  detail: string;
  status?: number;
  title?: string;
  field_errors?: FieldError[];
  request_id?: string | null;
  retry_after_seconds?: number;
  hint?: string;
}

/** The error as a plain document: an API failure keeps its status, code, field errors and request id. */
export function errorDocument(error: unknown): ErrorDocument {
  if (error instanceof ApiFailure) {
    const document: ErrorDocument = {
      status: error.status,
      code: error.code,
      title: error.title,
      detail: error.message,
      field_errors: error.fieldErrors,
      request_id: error.requestId,
      ...(error.retryAfterSeconds !== null ? { retry_after_seconds: error.retryAfterSeconds } : {}),
    };
    if (error.status === 0) {
      const cause = (error as { cause?: unknown }).cause;
      const reason = describeCause(cause);
      return { ...document, detail: reason ? `${error.message} (${reason})` : error.message };
    }
    return document;
  }
  if (error instanceof UsageError) return { code: 'usage', detail: error.message, ...(error.hint ? { hint: error.hint } : {}) };
  if (error instanceof CommandError)
    return { code: error.code, detail: error.message, ...(error.fieldErrors?.length ? { field_errors: error.fieldErrors } : {}) };
  return { code: 'internal_error', detail: error instanceof Error ? error.message : String(error) };
}

/** fetch's "fetch failed" hides the reason (ECONNREFUSED, a certificate) in its cause. */
function describeCause(cause: unknown): string | null {
  const error = (value: unknown) =>
    value && typeof value === 'object' && 'message' in value ? (value as Error & { code?: string }) : null;
  const outer = error(cause);
  if (!outer) return null;
  // Errors made by Node's own fetch are from another realm than `Error` in some hosts (jest): no instanceof.
  const inner = error(outer.cause);
  return inner ? `${inner.code ?? inner.name}: ${inner.message}` : outer.message;
}
