import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { CommandError, UsageError, type Command, type CommandContext } from '../command';

/** The modes a template exists for, in the order the prompt lists them, with what each is for. */
export const TEMPLATE_MODES = {
  state: 'data the service polls and shows on widgets',
  action: 'something done for the user once they confirm it',
  history: 'a list the service pages through, newest first',
  realtime: 'a live stream of events',
  webhook: 'events your runtime pushes, and the app’s webhook receiver',
} as const;
export type TemplateMode = keyof typeof TEMPLATE_MODES;
const MODES = Object.keys(TEMPLATE_MODES) as TemplateMode[];

/** The slug rule of the descriptor schema (`slug`): lowercase words joined by hyphens, 2 to 64 characters. */
const SLUG = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const SLUG_MAX = 64;

/** Template files stored under another name: npm leaves every `.gitignore` out of a published package. */
const STORED_AS: Record<string, string> = { gitignore: '.gitignore' };

const isMode = (value: string): value is TemplateMode => Object.prototype.hasOwnProperty.call(TEMPLATE_MODES, value);

/** `My Calendar (v2)` → `my-calendar-v2`: the slug a folder name stands for. */
export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, SLUG_MAX)
    .replace(/^-+|-+$/g, '');
}

/** `acme-calendar` → `Acme Calendar`: the listing name the descriptor starts with. */
export function titleOf(slug: string): string {
  return slug
    .split('-')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}

/**
 * Where the templates are: `SOUL_TEMPLATES_DIR`, else `templates/` of the package, which is `../../templates`
 * from both `src/commands/init.ts` and `dist/commands/init.js`. A bundle of the CLI (one file somewhere else)
 * sets the variable.
 */
export function templatesDir(env: Record<string, string | undefined>): string {
  return env.SOUL_TEMPLATES_DIR || resolve(__dirname, '..', '..', 'templates');
}

/** Every file under `dir`, as paths relative to it, sorted. */
function filesUnder(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .flatMap((entry) => {
      const path = prefix ? join(prefix, entry.name) : entry.name;
      return entry.isDirectory() ? filesUnder(dir, path) : [path];
    });
}

/** The mode given, or asked for at a terminal; never asked in CI. */
async function chooseMode(context: CommandContext): Promise<TemplateMode> {
  const given = context.options.mode;
  if (typeof given === 'string') {
    if (isMode(given)) return given;
    throw new UsageError(`--mode must be one of ${MODES.join(', ')}, not ${JSON.stringify(given)}`);
  }
  const prompter = context.prompter;
  if (!prompter) {
    throw new UsageError('soul init needs --mode here (CI=true or stdin is not a terminal).', `Pass --mode <${MODES.join('|')}>.`);
  }
  context.io.stderr.write(
    ['Which kind of capability?', ...MODES.map((mode, i) => `  ${i + 1}. ${mode.padEnd(9)} ${TEMPLATE_MODES[mode]}`), ''].join('\n'),
  );
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const answer = (await prompter.ask(`Mode (1-${MODES.length} or its name): `)).toLowerCase();
    const chosen = /^\d+$/.test(answer) ? MODES[Number(answer) - 1] : answer;
    if (chosen && isMode(chosen)) return chosen;
  }
  throw new UsageError('No mode chosen.', `Pass --mode <${MODES.join('|')}>.`);
}

/** The package's slug: `--name`, else the folder's name made one. */
function chooseName(context: CommandContext, dir: string): string {
  const given = context.options.name;
  if (typeof given === 'string') {
    if (SLUG.test(given) && given.length >= 2 && given.length <= SLUG_MAX) return given;
    const suggestion = slugify(given);
    throw new UsageError(
      `--name ${JSON.stringify(given)} is not a slug: 2 to ${SLUG_MAX} characters of lowercase words joined by hyphens.`,
      suggestion.length >= 2 ? `For example --name ${suggestion}` : undefined,
    );
  }
  const name = slugify(basename(dir));
  if (name.length < 2) {
    throw new UsageError(
      `The folder name ${JSON.stringify(basename(dir))} makes no slug.`,
      'Pass --name <slug>, for example --name my-calendar.',
    );
  }
  return name;
}

/** The folder to create the project in: new, or existing and empty (never a file overwritten). */
function assertEmptyTarget(dir: string): void {
  if (!existsSync(dir)) return;
  if (!statSync(dir).isDirectory()) throw new CommandError('not_a_directory', `${dir} exists and is not a folder.`);
  const entries = readdirSync(dir);
  if (entries.length > 0) {
    throw new CommandError(
      'directory_not_empty',
      `${dir} is not empty (${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', …' : ''}): soul init creates a project in a new or empty folder.`,
    );
  }
}

export const init: Command = {
  name: 'init',
  summary: 'Create a provider runtime project from a template: its descriptor, a runtime built with the SDK, and its tests',
  args: '[dir]',
  maxArgs: 1,
  options: {
    mode: {
      type: 'string',
      value: `<${MODES.join('|')}>`,
      description: 'The kind of capability of the template (asked at a terminal; required in CI)',
    },
    name: { type: 'string', value: '<slug>', description: 'The package’s slug and npm name (default: the folder’s name, as a slug)' },
  },
  examples: ['soul init my-calendar --mode state', 'soul init --mode webhook --name acme-meetings   # in an empty folder'],
  async run(context) {
    const given = context.args[0] ?? '.';
    const dir = resolve(given);
    assertEmptyTarget(dir);
    const name = chooseName(context, dir);
    const mode = await chooseMode(context);
    const source = join(templatesDir(context.io.env), mode);
    if (!existsSync(join(source, 'soul-package.json'))) {
      throw new CommandError(
        'templates_missing',
        `No ${mode} template at ${source}. Set SOUL_TEMPLATES_DIR to the templates folder of @soul-service/cli.`,
      );
    }
    const title = titleOf(name);
    const files: string[] = [];
    for (const path of filesUnder(source)) {
      const target = join(dirname(path), STORED_AS[basename(path)] ?? basename(path));
      const text = readFileSync(join(source, path), 'utf8').replaceAll('{{name}}', name).replaceAll('{{title}}', title);
      mkdirSync(dirname(join(dir, target)), { recursive: true });
      // `wx`: fails rather than overwrite, should a file appear in the folder meanwhile.
      writeFileSync(join(dir, target), text, { flag: 'wx' });
      files.push(target.split('\\').join('/'));
    }
    files.sort();
    const where = relative(process.cwd(), dir);
    context.out.result({ dir, mode, name, files }, [
      `Created ${name} (${mode}) in ${dir}:`,
      ...files.map((file) => `  ${file}`),
      'Next:',
      ...(where ? [`  cd ${/\s/.test(where) ? JSON.stringify(where) : where}`] : []),
      '  npm install',
      ...(mode === 'webhook' ? ['  export SOUL_WEBHOOK_SECRET=whsec_…   # the app’s webhook signing secret, in both terminals below'] : []),
      '  npm test                 # the runtime, called as the service calls it',
      '  npm run validate         # the descriptor, with the service’s rules',
      '  SOUL_LOCAL_JWKS=$(npx soul conformance --print-jwks-path) npm start   # then, in another terminal:',
      '  npm run conformance      # the full conformance suite against http://localhost:8787',
      'README.md says how to push it.',
    ]);
  },
};
