import type { Command, OptionSpec } from './command';
import { COMMANDS } from './commands';
import { GLOBAL_OPTIONS } from './global-options';

function optionLines(options: Record<string, OptionSpec>): string[] {
  const rows = Object.entries(options).map(([name, spec]) => [
    `${spec.short ? `-${spec.short}, ` : ''}--${name}${spec.value ? ` ${spec.value}` : ''}`,
    spec.description,
  ]);
  const width = Math.max(...rows.map(([left]) => left.length));
  return rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
}

/** `soul help`: every command of the table with its summary, and the global options. */
export function helpText(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'soul: the provider CLI of the service',
    '',
    'Usage: soul <command> [arguments] [options]',
    '',
    'Commands:',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    'Global options:',
    ...optionLines(GLOBAL_OPTIONS),
    '',
    'Exit codes: 0 done, 1 the API refused or the work failed, 2 wrong command line or missing credential.',
    'Run `soul help <command>` for its options and examples.',
    '',
  ].join('\n');
}

/** `soul help <command>` and `soul <command> --help`. */
export function commandHelp(command: Command): string {
  return [
    `soul ${command.name}: ${command.summary}`,
    '',
    `Usage: soul ${command.name}${command.args ? ` ${command.args}` : ''}${command.options ? ' [options]' : ''}`,
    ...(command.options ? ['', 'Options:', ...optionLines(command.options)] : []),
    '',
    'Global options:',
    ...optionLines(GLOBAL_OPTIONS),
    ...(command.examples?.length ? ['', 'Examples:', ...command.examples.map((e) => `  ${e}`)] : []),
    '',
  ].join('\n');
}
