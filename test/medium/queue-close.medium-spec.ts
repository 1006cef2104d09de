import type { RedisOptions } from 'ioredis';
import { ServiceQueue, ServiceWorker } from '../../src/infra/queue/quiet-close';

/**
 * Closing BullMQ's queues and workers while Redis is
 * unreachable (src/infra/queue/quiet-close.ts). The race is met on purpose:
 * each is closed at the moment its connection starts a reconnect attempt, after
 * a first attempt has failed. With BullMQ's own classes that close leaves an
 * unhandled rejection ("connect ECONNREFUSED"): a BullMQ `Queue` or `Worker` in
 * their place fails both tests.
 */
describe('BullMQ closed while Redis is unreachable', () => {
  // Port 1 on loopback: nothing listens there, so every connection attempt is refused at once.
  const unreachable: RedisOptions = { host: '127.0.0.1', port: 1, maxRetriesPerRequest: null };

  type Closable = { close: () => Promise<void> };
  /** The ioredis client under a BullMQ object (its `connection` is protected in BullMQ's types). */
  const clientOf = (closable: Closable) => (closable as unknown as { connection: { _client: { status: string } } }).connection._client;

  /** Resolves in the turn in which the client starts a reconnect attempt (status back to `connecting`). */
  const reconnectAttempt = (client: { status: string }) =>
    new Promise<void>((resolve) => {
      let failedOnce = false;
      const poll = () => {
        if (client.status === 'reconnecting') failedOnce = true;
        if (failedOnce && client.status === 'connecting') return resolve();
        setImmediate(poll);
      };
      poll();
    });

  /** Closes at the start of a reconnect attempt, lets the dropped socket's events run out, and answers the rejections left unhandled. */
  const closeMidReconnect = async (closable: Closable): Promise<string[]> => {
    const unhandled: string[] = [];
    const record = (reason: unknown) => unhandled.push(reason instanceof Error ? reason.message : String(reason));
    process.on('unhandledRejection', record);
    try {
      await reconnectAttempt(clientOf(closable));
      await closable.close();
      await new Promise((resolve) => setTimeout(resolve, 300));
    } finally {
      process.off('unhandledRejection', record);
    }
    return unhandled;
  };

  it('closes a queue', async () => {
    expect(await closeMidReconnect(new ServiceQueue('quiet-close', { connection: unreachable }))).toEqual([]);
  });

  it('closes a worker', async () => {
    const worker = new ServiceWorker('quiet-close', async () => undefined, { connection: unreachable, autorun: false });
    expect(await closeMidReconnect(worker)).toEqual([]);
  });
});
