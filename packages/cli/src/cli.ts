import { parseArgs } from 'node:util';
import { createApiClient, type ApiClient } from '@soul-service/api-client';
import { COMMANDS } from './commands';
import { EXIT, UsageError, type Command, type CommandContext, type Io, type OptionSpec, type OptionValues } from './command';
import { savedLogin } from './credentials';
import { helpText, commandHelp } from './help';
import { GLOBAL_OPTIONS } from './global-options';
import { Output } from './output';
import { Prompter } from './prompt';
import { VERSION } from './version';

/** The service a command talks to when neither `--base-url` nor `SOUL_BASE_URL` names one (a local `npm start`). */
export const DEFAULT_BASE_URL = 'http://localhost:3000';

/** CI=true or stdin not a terminal: nobody can answer a prompt, and a program reads the output. */
export function unattended(io: Io): boolean {
  const ci = io.env.CI;
  return (ci !== undefined && ci !== '' && ci !== 'false' && ci !== '0') || io.stdin.isTTY !== true;
}

function parseConfig(options: Record<string, OptionSpec>) {
  return Object.fromEntries(
    Object.entries(options).map(([name, spec]) => [name, { type: spec.type, ...(spec.short ? { short: spec.short } : {}) }]),
  );
}

/** Every option any command knows, so the first pass can tell an option's value from a command word. */
function allOptions(): Record<string, OptionSpec> {
  const all: Record<string, OptionSpec> = { ...GLOBAL_OPTIONS };
  for (const command of COMMANDS) Object.assign(all, command.options);
  return all;
}

/** The command named by the leading words (the longest name that matches: `packages create` before `packages`). */
export function findCommand(words: string[]): { command: Command; rest: string[] } | null {
  let best: { command: Command; rest: string[] } | null = null;
  for (const command of COMMANDS) {
    const parts = command.name.split(' ');
    if (parts.every((part, i) => words[i] === part) && (!best || parts.length > best.command.name.split(' ').length)) {
      best = { command, rest: words.slice(parts.length) };
    }
  }
  return best;
}

function normaliseBaseUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(
      `--base-url ${JSON.stringify(value)} is not a URL`,
      'Give the origin of the service, for example https://api.example.com',
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UsageError(`--base-url must be http or https, not ${url.protocol}`);
  return url.origin + url.pathname.replace(/\/+$/, '');
}

/** Opened on the first question only: an open prompter holds stdin, so it is closed when the command ends. */
interface PrompterSlot {
  prompter?: Prompter | null;
}

function contextFor(io: Io, out: Output, options: OptionValues, args: string[], slot: PrompterSlot): CommandContext {
  const baseUrl = normaliseBaseUrl(String(options['base-url'] ?? (io.env.SOUL_BASE_URL || DEFAULT_BASE_URL)));
  const headers = { 'user-agent': `soul-cli/${VERSION} node/${process.versions.node}` };
  const credential = () => {
    if (typeof options.token === 'string' && options.token) return { token: options.token, source: '--token' };
    if (io.env.SOUL_TOKEN) return { token: io.env.SOUL_TOKEN, source: 'SOUL_TOKEN' };
    const saved = savedLogin(io.env, baseUrl);
    return saved ? { token: saved.token, source: 'saved login' } : null;
  };
  let api: ApiClient | undefined;
  return {
    io,
    out,
    options,
    args,
    baseUrl,
    get prompter() {
      if (slot.prompter === undefined) slot.prompter = unattended(io) ? null : new Prompter(io);
      return slot.prompter;
    },
    credential,
    publicApi: () => createApiClient({ baseUrl, headers }),
    apiWith: (token) => createApiClient({ baseUrl, headers, token: () => token }),
    api: () => {
      if (api) return api;
      const found = credential();
      if (!found) {
        throw new UsageError(
          `Not logged in to ${baseUrl}.`,
          unattended(io)
            ? 'Set SOUL_TOKEN to a console or app token (or pass --token); CI never prompts.'
            : 'Run `soul login`, or set SOUL_TOKEN.',
        );
      }
      api = createApiClient({ baseUrl, headers, token: () => found.token });
      return api;
    },
  };
}

/**
 * Runs one command line and answers its exit code: 0 done, 1 the API refused or the work failed, 2 the command
 * line itself is wrong (README "Exit codes").
 */
export async function run(argv: string[], io: Io): Promise<number> {
  const wantsJson = argv.includes('--json') || unattended(io);
  let out = new Output(io, wantsJson);
  const slot: PrompterSlot = {};
  try {
    const first = parseArgs({ args: argv, options: parseConfig(allOptions()), strict: false, allowPositionals: true });
    const words = first.positionals;
    if (first.values.version && words.length === 0) {
      out.result({ version: VERSION }, VERSION);
      return EXIT.ok;
    }
    if (words.length === 0 || (words[0] === 'help' && words.length === 1)) {
      io.stdout.write(helpText());
      return words.length === 0 && !first.values.help ? EXIT.usage : EXIT.ok;
    }
    const helpFor = words[0] === 'help' ? findCommand(words.slice(1)) : null;
    if (helpFor) {
      io.stdout.write(commandHelp(helpFor.command));
      return EXIT.ok;
    }
    const found = findCommand(words);
    if (!found) throw new UsageError(`Unknown command: ${words.join(' ')}`, 'Run `soul help` for the list of commands.');
    const { command } = found;
    const options = { ...GLOBAL_OPTIONS, ...command.options };
    let parsed: ReturnType<typeof parseArgs>;
    try {
      parsed = parseArgs({ args: argv, options: parseConfig(options), strict: true, allowPositionals: true });
    } catch (error) {
      throw new UsageError((error as Error).message, `Run \`soul help ${command.name}\` for its options.`);
    }
    if (parsed.values.help) {
      io.stdout.write(commandHelp(command));
      return EXIT.ok;
    }
    const args = parsed.positionals.slice(command.name.split(' ').length);
    const min = command.minArgs ?? 0;
    const max = command.maxArgs ?? 0;
    if (args.length < min || args.length > max) {
      throw new UsageError(
        args.length < min ? `${command.name} needs ${command.args ?? 'an argument'}` : `Unexpected argument: ${args[max]}`,
        `Usage: soul ${command.name}${command.args ? ` ${command.args}` : ''}`,
      );
    }
    const values = parsed.values as OptionValues;
    out = new Output(io, wantsJson || values.json === true);
    await command.run(contextFor(io, out, values, args, slot));
    return EXIT.ok;
  } catch (error) {
    out.error(error);
    return error instanceof UsageError ? EXIT.usage : EXIT.failed;
  } finally {
    slot.prompter?.close();
  }
}
