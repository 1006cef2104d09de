import type { ParseArgsConfig } from 'node:util';
import type { ApiClient, FieldError } from '@soul-service/api-client';
import type { Output } from './output';
import type { Prompter } from './prompt';

/** Where the CLI reads and writes: the process's streams and environment, or a test's. */
export interface Io {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
  env: Record<string, string | undefined>;
  /** Aborted on Ctrl-C: a command that runs until stopped (`logs tail`) ends cleanly. */
  signal: AbortSignal;
}

type OptionType = NonNullable<ParseArgsConfig['options']>[string];

/** One option of a command: its `parseArgs` definition and the help line. */
export interface OptionSpec {
  type: OptionType['type'];
  short?: string;
  /** `<id>`, `<url>`: shown in the help after the option. */
  value?: string;
  description: string;
}

export type OptionValues = Record<string, string | boolean | undefined>;

/** What a command runs with. */
export interface CommandContext {
  io: Io;
  out: Output;
  options: OptionValues;
  args: string[];
  /** The service's origin, from `--base-url`, `SOUL_BASE_URL` or the default. */
  baseUrl: string;
  /** Prompts on the terminal; null when prompting is off (CI, stdin not a terminal). */
  prompter: Prompter | null;
  /** The API client with the resolved credential; a missing credential is a usage error naming what to set. */
  api(): ApiClient;
  /** The API client without a credential (login). */
  publicApi(): ApiClient;
  /** The API client with this token (checking a token before saving it). */
  apiWith(token: string): ApiClient;
  /** The token in use and where it came from, or null. */
  credential(): { token: string; source: string } | null;
}

/**
 * One entry of the command table (commands/index.ts). A command with spaces in its name (`logs tail`) is
 * matched on the leading words of the command line; adding a command is adding an entry.
 */
export interface Command {
  name: string;
  summary: string;
  /** Positional arguments as shown in the help (`<delivery_id>`, `[descriptor.json]`). */
  args?: string;
  minArgs?: number;
  maxArgs?: number;
  options?: Record<string, OptionSpec>;
  /** Lines of examples for the help. */
  examples?: string[];
  run(context: CommandContext): Promise<void>;
}

/** Exit codes (README "Exit codes"). */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/** The command line is wrong (unknown command or option, missing argument or credential): exit 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The command could not do its work for a reason outside the API's answers (a file, a local check): exit 1. */
export class CommandError extends Error {
  constructor(
    readonly code: string,
    message: string,
    /** The fields at fault, when the work was checking a file (a descriptor the rules refuse). */
    readonly fieldErrors?: FieldError[],
  ) {
    super(message);
    this.name = 'CommandError';
  }
}
