import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '@soul-service/cli';
import { slugify, TEMPLATE_MODES, titleOf } from '../src/commands/init';
import { terminal } from './terminal';

interface InitResult {
  dir: string;
  mode: string;
  name: string;
  files: string[];
}
interface ErrorOutput {
  error: { code: string; detail: string; hint?: string };
}

const CI = { CI: 'true' };
const MODES = Object.keys(TEMPLATE_MODES);
const FILES = ['.gitignore', 'README.md', 'package.json', 'server.js', 'soul-package.json', 'test/runtime.test.js'];

/** Every file under `dir`, relative to it. */
function tree(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((entry) => {
    const path = prefix ? `${prefix}/${entry.name}` : entry.name;
    return entry.isDirectory() ? tree(dir, path) : [path];
  });
}

const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;

describe('soul init', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'soul-init-'));
  });

  it.each(MODES)('creates the %s template with the name in place, and it passes soul validate', async (mode) => {
    const dir = join(root, `acme-${mode}`);
    const t = terminal(CI);
    expect(await run(['init', dir, '--mode', mode], t.io)).toBe(0);
    const result = JSON.parse(t.stdout()) as InitResult;
    expect(result).toEqual({ dir, mode, name: `acme-${mode}`, files: expect.arrayContaining(FILES) as unknown });
    expect(result.files).toHaveLength(FILES.length);
    expect(tree(dir).sort()).toEqual([...FILES].sort());
    for (const file of FILES) expect(readFileSync(join(dir, file), 'utf8')).not.toMatch(/\{\{\w+\}\}/);

    const descriptor = readJson(join(dir, 'soul-package.json'));
    expect(descriptor).toMatchObject({ slug: `acme-${mode}`, name: `Acme ${titleOf(mode)}` });
    expect((descriptor.capabilities as Array<{ type: string }>).map((c) => c.type)).toEqual([mode]);
    const pkg = readJson(join(dir, 'package.json'));
    expect(pkg).toMatchObject({
      name: `acme-${mode}`,
      scripts: { start: 'node server.js', test: 'node --test', validate: 'soul validate' },
      dependencies: { '@soul-service/runtime-sdk': '^0.1.0' },
      devDependencies: { '@soul-service/cli': '^0.1.0' },
    });
    expect((pkg.scripts as Record<string, string>).conformance).toMatch(/^soul conformance --url http:\/\/localhost:8787/);

    const validated = terminal(CI);
    expect(await run(['validate', join(dir, 'soul-package.json')], validated.io)).toBe(0);
    const { local } = JSON.parse(validated.stdout()) as { local: { passed: boolean; score: number } };
    expect(local.passed).toBe(true);
    expect(local.score).toBeGreaterThanOrEqual(95);
  });

  it('names the package after its folder, made a slug, and titles it', async () => {
    const dir = join(root, 'My Calendar (v2)');
    const t = terminal(CI);
    expect(await run(['init', dir, '--mode', 'state'], t.io)).toBe(0);
    expect((JSON.parse(t.stdout()) as InitResult).name).toBe('my-calendar-v2');
    expect(readJson(join(dir, 'soul-package.json'))).toMatchObject({ slug: 'my-calendar-v2', name: 'My Calendar V2' });
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toMatch(/^# My Calendar V2\n/);
  });

  it('takes --name as the slug, and refuses one that is not a slug (exit 2)', async () => {
    const named = terminal(CI);
    expect(await run(['init', join(root, 'anything'), '--mode', 'action', '--name', 'acme-bookings'], named.io)).toBe(0);
    expect(readJson(join(root, 'anything', 'package.json')).name).toBe('acme-bookings');

    const refused = terminal(CI);
    expect(await run(['init', join(root, 'other'), '--mode', 'action', '--name', 'Acme Bookings'], refused.io)).toBe(2);
    expect((JSON.parse(refused.stderr()) as ErrorOutput).error).toMatchObject({ code: 'usage', hint: 'For example --name acme-bookings' });
    expect(existsSync(join(root, 'other'))).toBe(false);
  });

  it('refuses a folder that is not empty, and leaves it as it was (exit 1)', async () => {
    const dir = join(root, 'busy');
    mkdirSync(dir);
    writeFileSync(join(dir, 'server.js'), 'mine');
    const t = terminal(CI);
    expect(await run(['init', dir, '--mode', 'state'], t.io)).toBe(1);
    expect((JSON.parse(t.stderr()) as ErrorOutput).error).toMatchObject({
      code: 'directory_not_empty',
      detail: expect.stringContaining('server.js') as unknown,
    });
    expect(readdirSync(dir)).toEqual(['server.js']);
    expect(readFileSync(join(dir, 'server.js'), 'utf8')).toBe('mine');
  });

  it('writes into an empty folder that exists', async () => {
    const dir = join(root, 'empty');
    mkdirSync(dir);
    expect(await run(['init', dir, '--mode', 'history'], terminal(CI).io)).toBe(0);
    expect(tree(dir).sort()).toEqual([...FILES].sort());
  });

  it('never prompts in CI: without --mode it is a usage error, and nothing is written (exit 2)', async () => {
    const dir = join(root, 'ci');
    const t = terminal(CI, true);
    expect(await run(['init', dir], t.io)).toBe(2);
    expect((JSON.parse(t.stderr()) as ErrorOutput).error).toMatchObject({
      code: 'usage',
      hint: expect.stringContaining('--mode') as unknown,
    });
    expect(existsSync(dir)).toBe(false);
  });

  it('refuses a mode it has no template for (exit 2)', async () => {
    const t = terminal(CI);
    expect(await run(['init', join(root, 'streams'), '--mode', 'stream'], t.io)).toBe(2);
    expect((JSON.parse(t.stderr()) as ErrorOutput).error.detail).toMatch(/--mode must be one of state, action, history, realtime, webhook/);
  });

  it('asks for the mode at a terminal, by number or name, and prints the next steps', async () => {
    const dir = join(root, 'asked');
    const t = terminal({}, true);
    t.stdin.write('seven\n2\n');
    expect(await run(['init', dir], t.io)).toBe(0);
    expect(t.stderr()).toContain('Which kind of capability?');
    expect(t.stderr()).toContain('2. action');
    expect(readJson(join(dir, 'soul-package.json')).capabilities).toMatchObject([{ type: 'action', name: 'book_meeting' }]);
    expect(t.stdout()).toContain(`Created asked (action) in ${dir}:`);
    expect(t.stdout()).toContain('npm run validate');
    expect(t.stdout()).toContain('SOUL_LOCAL_JWKS=$(npx soul conformance --print-jwks-path) npm start');
  });

  it('reads the templates from SOUL_TEMPLATES_DIR, and says so when the mode has none there', async () => {
    const templates = join(root, 'templates');
    mkdirSync(join(templates, 'state', 'test'), { recursive: true });
    writeFileSync(join(templates, 'state', 'soul-package.json'), '{ "slug": "{{name}}", "name": "{{title}}" }\n');
    writeFileSync(join(templates, 'state', 'test', 'a.test.js'), '// {{name}}\n');
    const env = { ...CI, SOUL_TEMPLATES_DIR: templates };

    const t = terminal(env);
    expect(await run(['init', join(root, 'own-template'), '--mode', 'state'], t.io)).toBe(0);
    expect((JSON.parse(t.stdout()) as InitResult).files).toEqual(['soul-package.json', 'test/a.test.js']);
    expect(readFileSync(join(root, 'own-template', 'test', 'a.test.js'), 'utf8')).toBe('// own-template\n');

    const missing = terminal(env);
    expect(await run(['init', join(root, 'no-template'), '--mode', 'action'], missing.io)).toBe(1);
    expect((JSON.parse(missing.stderr()) as ErrorOutput).error).toMatchObject({
      code: 'templates_missing',
      detail: expect.stringContaining('SOUL_TEMPLATES_DIR') as unknown,
    });
  });

  it('makes slugs and titles of names', () => {
    expect(slugify('Café Öffnungszeiten')).toBe('cafe-offnungszeiten');
    expect(slugify('--a  b--')).toBe('a-b');
    expect(slugify('x'.repeat(70))).toHaveLength(64);
    expect(titleOf('acme-bank-2')).toBe('Acme Bank 2');
  });
});
