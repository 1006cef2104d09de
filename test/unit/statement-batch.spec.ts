import { StatementBatch } from '../../src/infra/database/statement-batch';

/** A `run` whose statements finish only when the test says so, recording what each was given. */
function controlledRun() {
  const calls: Array<{ inputs: number[]; finish: () => void; fail: (error: Error) => void }> = [];
  const run = (inputs: number[]) =>
    new Promise<string[]>((resolve, reject) =>
      calls.push({ inputs, finish: () => resolve(inputs.map((n) => `answer ${n}`)), fail: reject }),
    );
  return { calls, run };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('StatementBatch', () => {
  it('runs the calls of one turn of the event loop as one statement and answers each its own output', async () => {
    const { calls, run } = controlledRun();
    const batch = new StatementBatch(run, 100);
    const answers = Promise.all([1, 2, 3].map((n) => batch.add(n)));
    await turn();
    expect(calls.map((c) => c.inputs)).toEqual([[1, 2, 3]]);
    calls[0].finish();
    await expect(answers).resolves.toEqual(['answer 1', 'answer 2', 'answer 3']);
  });

  it('runs one statement at a time: calls made while one runs wait and go together in the next', async () => {
    const { calls, run } = controlledRun();
    const batch = new StatementBatch(run, 100);
    const first = batch.add(1);
    await turn();
    const later = [batch.add(2), batch.add(3)];
    await turn();
    expect(calls).toHaveLength(1);
    calls[0].finish();
    await expect(first).resolves.toBe('answer 1');
    await turn();
    expect(calls.map((c) => c.inputs)).toEqual([[1], [2, 3]]);
    calls[1].finish();
    await expect(Promise.all(later)).resolves.toEqual(['answer 2', 'answer 3']);
  });

  it('takes at most `max` calls per statement, oldest first', async () => {
    const { calls, run } = controlledRun();
    const batch = new StatementBatch(run, 2);
    const answers = Promise.all([1, 2, 3].map((n) => batch.add(n)));
    await turn();
    calls[0].finish();
    await turn();
    await turn();
    calls[1].finish();
    await expect(answers).resolves.toEqual(['answer 1', 'answer 2', 'answer 3']);
    expect(calls.map((c) => c.inputs)).toEqual([[1, 2], [3]]);
  });

  it("fails every call of a failed statement with its error, and the next statement's calls are not touched", async () => {
    const { calls, run } = controlledRun();
    const batch = new StatementBatch(run, 100);
    const failed = [batch.add(1), batch.add(2)];
    await turn();
    const next = batch.add(3);
    calls[0].fail(new Error('deadlock detected'));
    for (const call of failed) await expect(call).rejects.toThrow('deadlock detected');
    await turn();
    calls[1].finish();
    await expect(next).resolves.toBe('answer 3');
  });
});
