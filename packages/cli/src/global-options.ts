import type { OptionSpec } from './command';

/** Options every command takes. */
export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  'base-url': { type: 'string', value: '<url>', description: 'The service (default $SOUL_BASE_URL, else http://localhost:3000)' },
  token: {
    type: 'string',
    value: '<token>',
    description: 'A console or app token for this call (default $SOUL_TOKEN, else the saved login)',
  },
  json: {
    type: 'boolean',
    description: 'One JSON document on stdout, errors as JSON on stderr (implied when CI=true or stdin is not a terminal)',
  },
  help: { type: 'boolean', short: 'h', description: 'Show the help of the command' },
  version: { type: 'boolean', description: 'Show the version of the CLI' },
};
