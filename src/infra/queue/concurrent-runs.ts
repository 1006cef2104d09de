/**
 * Up to `limit()` concurrent runs of one drain loop (the job relay's relays,
 * the event dispatcher's drains). `wake()` starts a run when there is room;
 * a wake while all run is remembered, so each run that ends starts one more
 * until the remembered wakes are used up: work committed while every run was
 * busy is never left waiting for the next wake-up.
 */
export class ConcurrentRuns {
  private readonly running = new Set<Promise<void>>();
  private wakeAgain = 0;
  private stopped = false;

  constructor(
    private readonly drain: () => Promise<void>,
    private readonly limit: () => number,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Fewer runs than the limit are going: another may start beside them. */
  get hasRoom(): boolean {
    return this.running.size < this.limit();
  }

  get active(): number {
    return this.running.size;
  }

  wake(): void {
    if (this.stopped) return;
    if (!this.hasRoom) {
      this.wakeAgain = this.limit();
      return;
    }
    const run: Promise<void> = this.drain()
      .catch(this.onError)
      .finally(() => {
        this.running.delete(run);
        if (this.wakeAgain > 0) {
          this.wakeAgain -= 1;
          this.wake();
        }
      });
    this.running.add(run);
  }

  /** No run starts any more; resolves when the ones going have ended. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.running]);
  }
}
