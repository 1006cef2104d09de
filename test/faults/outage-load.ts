import request from 'supertest';

/** No answer may take longer than this, outage or not. */
export const MAX_ANSWER_MS = 5_000;

export interface Sample {
  path: string;
  phase: string;
  status: number;
  ms: number;
  res?: request.Response;
  error?: string;
}

/**
 * Steady load on the api while a test takes a server away and brings it back.
 * Every answer is recorded with the phase it was sent and answered in; a
 * request in flight while the phase changes belongs to neither side
 * (`before→down`), so the checks never misfile a request that raced the kill.
 */
export class OutageLoad {
  readonly samples: Sample[] = [];
  phase = 'before';
  private running = false;
  private workers: Promise<void>[] = [];

  /** Sends one request (built by `send`) and records how and when it was answered. */
  async hit(path: string, send: () => request.Test): Promise<Sample> {
    const started = Date.now();
    const startPhase = this.phase;
    const phaseOf = () => (this.phase === startPhase ? this.phase : `${startPhase}→${this.phase}`);
    try {
      const res = await send().timeout(MAX_ANSWER_MS + 2_000);
      return { path, phase: phaseOf(), status: res.status, ms: Date.now() - started, res };
    } catch (error) {
      return { path, phase: phaseOf(), status: 0, ms: Date.now() - started, error: (error as Error).message };
    }
  }

  /** One loop per request maker, each sending again 20 ms after its previous answer, until `stop`. */
  start(makers: Array<() => Promise<Sample>>): void {
    this.running = true;
    this.workers = makers.map(async (make) => {
      while (this.running) {
        this.samples.push(await make());
        await new Promise((r) => setTimeout(r, 20));
      }
    });
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
  }

  /** Whether a sample for `path` answered `ok` after the first `after` samples. */
  seen(path: string, ok: (status: number) => boolean, after: number): boolean {
    return this.samples.some((s, i) => i >= after && s.path === path && ok(s.status));
  }
}
