import { createInterface, type Interface } from 'node:readline';
import { Writable } from 'node:stream';
import type { Io } from './command';

/**
 * Questions on the terminal: prompts go to stderr (stdout is the command's output), answers come line by line
 * from stdin. Lines are queued as they arrive, so answers typed (or pasted) ahead of their question are kept. A
 * hidden question (a password) mutes the echo of what is typed.
 */
export class Prompter {
  private readonly rl: Interface;
  private readonly lines: string[] = [];
  private waiting: { resolve: (line: string) => void; reject: (error: Error) => void } | null = null;
  private closed = false;
  private muted = false;

  constructor(private readonly io: Io) {
    const echo = new Writable({
      write: (chunk: Buffer | string, _encoding, done) => {
        if (!this.muted) io.stderr.write(chunk.toString());
        done();
      },
    });
    this.rl = createInterface({ input: io.stdin, output: echo, terminal: io.stdin.isTTY === true, prompt: '' });
    this.rl.on('line', (line) => {
      if (this.waiting) {
        this.waiting.resolve(line);
        this.waiting = null;
      } else this.lines.push(line);
    });
    this.rl.on('close', () => {
      this.closed = true;
      this.waiting?.reject(new Error('stdin ended before an answer'));
      this.waiting = null;
    });
  }

  private nextLine(): Promise<string> {
    const queued = this.lines.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (this.closed) return Promise.reject(new Error('stdin ended before an answer'));
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  async ask(question: string): Promise<string> {
    this.io.stderr.write(question);
    return (await this.nextLine()).trim();
  }

  /** Asks without showing what is typed; the line break the muted echo swallowed is written after. */
  async askHidden(question: string): Promise<string> {
    this.io.stderr.write(question);
    this.muted = true;
    try {
      return await this.nextLine();
    } finally {
      this.muted = false;
      if (this.io.stdin.isTTY) this.io.stderr.write('\n');
    }
  }

  close(): void {
    this.rl.close();
  }
}
