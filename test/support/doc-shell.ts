import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startSoul } from './soul-cli';

/**
 * Runs the `sh` blocks of a Markdown page (docs/quickstart.md) the way a reader's shell would, for the subset of
 * shell the page uses: `export NAME=value`, `export NAME=$(pipeline)`, pipelines of `curl`, `jq`, `echo` and `soul`, line
 * continuations and comments. Anything else fails the test, so the page cannot drift into commands nobody checks.
 * `curl` goes to the real service with `fetch` (it is always written with `-f`: an HTTP error fails the step), `jq`
 * understands paths (`.versions[0].id`, with `-r`) and `.field = $arg` assignments; other filters only format
 * output for the reader and are skipped. `soul` is the real CLI (a bundle of packages/cli) run as a subprocess in a
 * folder holding the page's files, with the page's exported variables as its environment, as the reader's shell
 * would pass them; a non-zero exit fails the step.
 */

export interface DocBlock {
  lang: string;
  /** What follows the language on the fence line (`file=package.json`). */
  info: string;
  body: string;
  line: number;
}

/** Fenced blocks of a Markdown file, in order. */
export function fencedBlocks(path: string): DocBlock[] {
  const lines = readFileSync(path, 'utf8').split('\n');
  const blocks: DocBlock[] = [];
  for (let i = 0; i < lines.length; i += 1) {
    const open = /^```(\S*)\s*(.*)$/.exec(lines[i]);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i += 1; i < lines.length && lines[i] !== '```'; i += 1) body.push(lines[i]);
    blocks.push({ lang: open[1], info: open[2], body: body.join('\n'), line: start + 1 });
  }
  return blocks;
}

/** A request `curl` made: for the check against the OpenAPI document. */
export interface SentRequest {
  method: string;
  path: string;
  body: unknown;
  status: number;
  answer: string;
}

interface Word {
  text: string;
  /** An unquoted `|`. */
  pipe?: boolean;
}

export class DocShell {
  readonly sent: SentRequest[] = [];
  readonly vars = new Map<string, string>();

  /** The reader's working folder (the page's files) and the CLI's config folder, for `soul`. */
  private readonly workDir = mkdtempSync(join(tmpdir(), 'doc-shell-'));

  constructor(
    /** Values the reader supplies (the service's address, the token in a mail): they win over the page's placeholders. */
    private readonly supplied: Record<string, () => string | Promise<string>>,
    private readonly files: Record<string, string>,
    /** The bundled `soul` CLI (test/support/soul-cli.ts), when the page uses it. */
    private readonly soulBundle?: string,
  ) {
    for (const [name, body] of Object.entries(files)) writeFileSync(join(this.workDir, name), body);
    mkdirSync(join(this.workDir, '.soul'));
  }

  /** Runs one `sh` block; a `# repeat until .path is "value"` first line repeats it until the output has that value. */
  async run(block: DocBlock): Promise<void> {
    const until = /^#\s*repeat until (\S+) is "([^"]*)"/.exec(block.body.trim());
    const statements = this.statements(block.body);
    if (!until) {
      for (const statement of statements) await this.statement(statement, block);
      return;
    }
    const deadline = Date.now() + 60_000;
    for (;;) {
      const outputs: string[] = [];
      for (const statement of statements) outputs.push(await this.statement(statement, block));
      if (String(jqPath(JSON.parse(outputs[outputs.length - 1]), until[1])) === until[2]) return;
      if (Date.now() > deadline) throw new Error(`line ${block.line}: ${until[1]} never became "${until[2]}"`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Lines joined at `\` continuations, without comment lines and blank lines. */
  private statements(body: string): string[] {
    const joined = body.replace(/\\\n\s*/g, ' ');
    return joined
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
  }

  private async statement(text: string, block: DocBlock): Promise<string> {
    const where = `quickstart.md line ${block.line}: ${text.slice(0, 80)}`;
    try {
      const substitution = /^export\s+([A-Z_][A-Z0-9_]*)=\$\(([\s\S]*)\)$/.exec(text);
      if (substitution) {
        const [, name, inner] = substitution;
        const value = await this.pipeline(this.words(inner));
        this.vars.set(name, name in this.supplied ? await this.supplied[name]() : value.replace(/\n$/, ''));
        return value;
      }
      const words = this.words(text);
      if (words[0]?.text === 'export') {
        if (words.length !== 2) throw new Error('export takes one NAME=value');
        const [name, ...rest] = words[1].text.split('=');
        if (!/^[A-Z_][A-Z0-9_]*$/.test(name) || rest.length === 0) throw new Error(`not an assignment: ${words[1].text}`);
        this.vars.set(name, name in this.supplied ? await this.supplied[name]() : rest.join('='));
        return '';
      }
      return await this.pipeline(words);
    } catch (error) {
      throw new Error(`${where}\n${(error as Error).message}`);
    }
  }

  private async pipeline(words: Word[]): Promise<string> {
    const stages: Word[][] = [[]];
    for (const word of words) {
      if (word.pipe) stages.push([]);
      else stages[stages.length - 1].push(word);
    }
    let input = '';
    for (const [i, stage] of stages.entries()) {
      const [command, ...args] = stage.map((w) => w.text);
      if (command === 'curl') input = await this.curl(args, input);
      else if (command === 'jq') input = this.jq(args, input, i === stages.length - 1);
      else if (command === 'echo') input = `${args.join(' ')}\n`;
      else if (command === 'soul') input = await this.soul(args);
      else throw new Error(`unsupported command: ${command}`);
    }
    return input;
  }

  private async curl(args: string[], stdin: string): Promise<string> {
    let method: string | undefined;
    let url: string | undefined;
    let data: string | undefined;
    let user: string | undefined;
    const headers: Record<string, string> = {};
    for (let i = 0; i < args.length; i += 1) {
      const arg = args[i];
      if (arg === '-X') method = args[++i];
      else if (arg === '-H') {
        const [name, ...value] = args[++i].split(':');
        headers[name.trim().toLowerCase()] = value.join(':').trim();
      } else if (arg === '-d' || arg === '--data') {
        const raw = args[++i];
        data = raw === '@-' ? stdin : raw.startsWith('@') ? this.file(raw.slice(1)) : raw;
      } else if (arg === '-u') user = args[++i];
      else if (/^-[fsS]+$/.test(arg)) continue;
      else if (arg.startsWith('-')) throw new Error(`unsupported curl option ${arg}`);
      else if (url) throw new Error(`two URLs: ${url} and ${arg}`);
      else url = arg;
    }
    if (!url) throw new Error('curl without a URL');
    if (!args.some((a) => /^-[sS]*f[sS]*$/.test(a)))
      throw new Error('every curl of the page uses -f, so that an HTTP error stops the reader');
    method ??= data === undefined ? 'GET' : 'POST';
    if (data !== undefined) headers['content-type'] ??= 'application/x-www-form-urlencoded';
    if (user) headers.authorization = `Basic ${Buffer.from(user).toString('base64')}`;
    const res = await fetch(url, { method, headers, body: data });
    const answer = await res.text();
    const parsed = new URL(url);
    this.sent.push({
      method,
      path: parsed.pathname,
      body:
        data === undefined
          ? undefined
          : headers['content-type'].includes('json')
            ? JSON.parse(data)
            : Object.fromEntries(new URLSearchParams(data)),
      status: res.status,
      answer,
    });
    if (res.status >= 400) throw new Error(`curl -f: ${method} ${parsed.pathname} answered ${res.status}: ${answer.slice(0, 500)}`);
    return answer;
  }

  private async soul(args: string[]): Promise<string> {
    if (!this.soulBundle) throw new Error('the page uses soul, but no CLI bundle was given to the DocShell');
    const env: Record<string, string> = { SOUL_CONFIG_DIR: join(this.workDir, '.soul') };
    for (const [name, value] of this.vars) env[name] = value;
    const finished = await startSoul(this.soulBundle, args, { cwd: this.workDir, env }).done;
    if (finished.code !== 0) throw new Error(`soul ${args.join(' ')} exited ${finished.code}: ${finished.stderr.slice(0, 1000)}`);
    return finished.stdout;
  }

  private jq(args: string[], input: string, last: boolean): string {
    let raw = false;
    const named: Record<string, string> = {};
    const rest: string[] = [];
    for (let i = 0; i < args.length; i += 1) {
      if (args[i] === '-r') raw = true;
      else if (args[i] === '--arg') {
        named[args[i + 1]] = args[i + 2];
        i += 2;
      } else rest.push(args[i]);
    }
    const [filter, file] = rest;
    const value: unknown = JSON.parse(file ? this.file(file) : input);
    const assignments = filter.split('|').map((part) => /^\s*\.([A-Za-z_]\w*)\s*=\s*\$(\w+)\s*$/.exec(part));
    if (assignments.every((a) => a !== null)) {
      const copy = { ...(value as Record<string, unknown>) };
      for (const [, field, arg] of assignments) {
        if (!(arg in named)) throw new Error(`jq: $${arg} is not defined`);
        copy[field] = named[arg];
      }
      return JSON.stringify(copy);
    }
    if (/^(\.[A-Za-z_]\w*|\[\d+\])+$/.test(filter)) {
      const picked = jqPath(value, filter);
      if (picked === undefined || picked === null) throw new Error(`jq: ${filter} is null in ${input.slice(0, 300)}`);
      return raw && typeof picked === 'string' ? `${picked}\n` : `${JSON.stringify(picked)}\n`;
    }
    // A filter that only shapes what the reader sees: fine at the end of a pipeline.
    if (!last || raw) throw new Error(`jq filter not understood: ${filter}`);
    return input;
  }

  private file(name: string): string {
    if (!(name in this.files)) throw new Error(`no file ${name} on the page`);
    return this.files[name];
  }

  /** Shell words with `$VAR` expansion outside single quotes and unquoted `|` as separators. */
  words(text: string): Word[] {
    const words: Word[] = [];
    let current: string | null = null;
    const expand = (name: string) => {
      const value = this.vars.get(name);
      if (value === undefined) throw new Error(`$${name} is used before it is set`);
      return value;
    };
    for (let i = 0; i < text.length; i += 1) {
      const c = text[i];
      if (c === "'") {
        const end = text.indexOf("'", i + 1);
        if (end === -1) throw new Error('unterminated single quote');
        current = (current ?? '') + text.slice(i + 1, end);
        i = end;
      } else if (c === '"') {
        let value = '';
        for (i += 1; i < text.length && text[i] !== '"'; i += 1) {
          if (text[i] === '\\' && '"\\$`'.includes(text[i + 1])) value += text[++i];
          else if (text[i] === '$') {
            const name = /^\$(\w+)/.exec(text.slice(i))![1];
            value += expand(name);
            i += name.length;
          } else value += text[i];
        }
        if (i >= text.length) throw new Error('unterminated double quote');
        current = (current ?? '') + value;
      } else if (c === '$') {
        const name = /^\$(\w+)/.exec(text.slice(i));
        if (!name) throw new Error(`unsupported expansion at ${text.slice(i, i + 10)}`);
        current = (current ?? '') + expand(name[1]);
        i += name[1].length;
      } else if (c === '|') {
        if (current !== null) words.push({ text: current });
        current = null;
        words.push({ text: '|', pipe: true });
      } else if (/\s/.test(c)) {
        if (current !== null) words.push({ text: current });
        current = null;
      } else if (c === '#' && current === null) {
        break;
      } else if (';&<>`(){}'.includes(c) && !(c === '{' || c === '}')) {
        throw new Error(`unsupported shell syntax: ${c}`);
      } else {
        current = (current ?? '') + c;
      }
    }
    if (current !== null) words.push({ text: current });
    return words;
  }
}

/** `.a.b[0].c` of a value. */
export function jqPath(value: unknown, path: string): unknown {
  let at: unknown = value;
  for (const [, field, index] of path.matchAll(/\.([A-Za-z_]\w*)|\[(\d+)\]/g)) {
    if (at === null || typeof at !== 'object') return undefined;
    at = field !== undefined ? (at as Record<string, unknown>)[field] : (at as unknown[])[Number(index)];
  }
  return at;
}
