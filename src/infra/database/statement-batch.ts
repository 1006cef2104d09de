interface Pending<In, Out> {
  input: In;
  settle: (output: Out) => void;
  fail: (error: unknown) => void;
}

/**
 * A group commit for work one statement can do for many callers at once. The
 * calls made in one turn of the event loop, or while the previous statement
 * runs, go to `run` together (at most `max` of them), so under load each call
 * no longer pays for a statement of its own and the batches grow with the
 * load; an idle call waits for nothing but its own turn of the event loop.
 * One statement runs at a time. `run` answers one output per input, in the
 * inputs' order; if it throws, every call of that batch fails with its error.
 */
export class StatementBatch<In, Out> {
  private pending: Array<Pending<In, Out>> = [];
  private flushing = false;

  constructor(
    private readonly run: (inputs: In[]) => Promise<Out[]>,
    private readonly max: number,
  ) {}

  add(input: In): Promise<Out> {
    return new Promise((settle, fail) => {
      if (this.pending.length === 0 && !this.flushing) setImmediate(() => void this.flush());
      this.pending.push({ input, settle, fail });
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    const batch = this.pending.splice(0, this.max);
    try {
      const outputs = await this.run(batch.map((call) => call.input));
      batch.forEach((call, i) => call.settle(outputs[i]));
    } catch (error) {
      for (const call of batch) call.fail(error);
    } finally {
      this.flushing = false;
      if (this.pending.length > 0) setImmediate(() => void this.flush());
    }
  }
}
