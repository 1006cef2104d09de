/** The `soul` CLI as a library: run a command line with given streams (tests, wrappers), and the command table. */
export { run, unattended, findCommand, DEFAULT_BASE_URL } from './cli';
export { COMMANDS } from './commands';
export { EXIT, UsageError, CommandError } from './command';
export type { Command, CommandContext, Io, OptionSpec } from './command';
export { GLOBAL_OPTIONS } from './global-options';
export { configDir, credentialsPath } from './credentials';
export { VERSION } from './version';
