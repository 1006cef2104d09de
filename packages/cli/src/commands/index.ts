import type { Command } from '../command';
import { login, logout, whoami } from './auth';
import { conformance } from './conformance';
import { dev } from './dev';
import { init } from './init';
import { invoke } from './invoke';
import { listen } from './listen';
import { logsTail } from './logs';
import { packagesCreate, packagesList, publish, push, status, submit } from './packages';
import { types } from './types';
import { validate } from './validate';
import { deliveriesReplay, trigger } from './webhooks';

/**
 * The command table, in the order `soul help` lists it. A new command (`dev`,
 * `listen`, `invoke`) is one more entry: its options are parsed, its help written and its errors and
 * exit codes handled by cli.ts like the others'. An option name means one thing in every command that takes it
 * (the first pass of the parser reads all of them at once), so reuse `--package`, `--app` from shared.ts.
 */
export const COMMANDS: Command[] = [
  init,
  login,
  logout,
  whoami,
  packagesCreate,
  packagesList,
  validate,
  types,
  conformance,
  push,
  submit,
  publish,
  status,
  logsTail,
  invoke,
  listen,
  dev,
  trigger,
  deliveriesReplay,
];
