import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface Generator {
  renderReference(schema: object): string;
  updatedDocument(document: string, schema: object): Promise<string>;
  SCHEMA_FILE: string;
  DOC_FILE: string;
  START: string;
  END: string;
}
const SCRIPT = join(__dirname, '..', '..', 'scripts', 'generate-descriptor-reference.js');
// A plain node script, loaded as CommonJS; its prettier step runs in a child process (prettier 3 imports dynamically, which jest's VM refuses).
// eslint-disable-next-line @typescript-eslint/no-require-imports
const generator = require(SCRIPT) as Generator;

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- the schema document, read loosely
const schema = JSON.parse(readFileSync(generator.SCHEMA_FILE, 'utf8')) as Json;
const page = readFileSync(generator.DOC_FILE, 'utf8');
const MODES = ['state', 'action', 'history', 'realtime', 'webhook'];

/** Exit status and stderr of `node scripts/generate-descriptor-reference.js --check …`. */
function check(...args: string[]): { status: number; stderr: string } {
  try {
    execFileSync(process.execPath, [SCRIPT, '--check', ...args], { stdio: 'pipe' });
    return { status: 0, stderr: '' };
  } catch (error) {
    const failed = error as { status: number; stderr: Buffer };
    return { status: failed.status, stderr: failed.stderr.toString() };
  }
}

describe('the field reference of docs/descriptor.md, generated from the descriptor schema', () => {
  it('is up to date (run `node scripts/generate-descriptor-reference.js` after changing the schema)', () => {
    expect(check()).toEqual({ status: 0, stderr: '' });
    expect(page).toContain(generator.renderReference(schema).split('\n')[0]);
  });

  it('is reported stale when the schema changes', () => {
    const changed = structuredClone(schema);
    changed.$defs.stateCapability.properties.refreshInterval.description = 'Polled every so often.';
    expect(generator.renderReference(changed)).toContain('Polled every so often.');
    const file = join(mkdtempSync(join(tmpdir(), 'descriptor-schema-')), 'schema.json');
    writeFileSync(file, JSON.stringify(changed));
    expect(check('--schema', file)).toEqual({ status: 1, stderr: expect.stringContaining('the field reference is stale') });
  });

  it('has a table per mode with every field of the mode, its default and its description', () => {
    const reference = generator.renderReference(schema);
    for (const mode of MODES) {
      const definition = schema.$defs[`${mode}Capability`];
      const section = reference.split(`### \`${mode}\` capability`)[1].split('\n### ')[0];
      for (const field of Object.keys(definition.properties)) expect(section).toContain(`| \`${field}\``);
    }
    expect(reference).toContain('| `refreshInterval` | integer 1 to 86400 | `300` |');
    expect(reference).toContain('| `heartbeatInterval` | integer 1 to 3600 | `30` |');
    expect(reference).toContain('| `components` (other spelling) |');
    expect(reference).toContain('| `description` | string | `""` |');
    expect(reference).not.toContain('| `$schema`');
  });

  it('refuses a page without the markers instead of appending somewhere', async () => {
    await expect(generator.updatedDocument('# Capability descriptors\n', schema)).rejects.toThrow(/descriptor-reference/);
    expect(page.indexOf(generator.START)).toBeGreaterThan(0);
    expect(page.indexOf(generator.END)).toBeGreaterThan(page.indexOf(generator.START));
  });
});
