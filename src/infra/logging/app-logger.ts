import { Inject, Injectable, LoggerService } from '@nestjs/common';
import type { Logger as Pino, Level } from 'pino';

export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/**
 * Nest's `LoggerService` on the root pino logger: `new Logger('Context').warn(…)`
 * anywhere in the code ends up here. The last string argument Nest passes is the
 * context; for `error`, a string before it is the stack. An `Error` as the message
 * is logged as `err` with its stack, an object as fields of the line (redacted
 * like every line); further arguments are not logged.
 */
@Injectable()
export class AppLogger implements LoggerService {
  constructor(@Inject(ROOT_LOGGER) readonly pino: Pino) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    if (!this.pino.isLevelEnabled(level)) return;
    const fields: Record<string, unknown> = {};
    // Nest's Logger appends its context, after an `undefined` stack when there was none.
    const rest = params.filter((p) => p !== undefined);
    if (rest.length > 0 && typeof rest[rest.length - 1] === 'string') fields.context = rest.pop();
    let text: string | undefined;
    if (message instanceof Error) {
      fields.err = message;
      text = message.message;
    } else if (message !== null && typeof message === 'object') {
      Object.assign(fields, message);
      // logger.warn({ id }, 'what happened'): the fields, then the message.
      if (typeof rest[0] === 'string' && !isStack(rest[0])) text = rest.shift() as string;
    } else {
      text = String(message);
    }
    if (typeof rest[0] === 'string' && isStack(rest[0])) fields.stack = rest.shift();
    // Anything else Nest was given is left out, as pino itself leaves out arguments without a format: an object there
    // would sit deeper than the redaction paths reach.
    this.pino[level](fields, text);
  }
}

function isStack(text: string): boolean {
  return /\n\s+at /.test(text);
}
