import type { EventEmitter } from 'node:events';
import { Queue, Worker } from 'bullmq';

/**
 * BullMQ's queues and workers, closed without an unhandled rejection when
 * Redis is unreachable.
 *
 * BullMQ closes a connection whose reconnect attempt is under way by dropping
 * the socket, and removes every listener of the connection as it does. The
 * connection's start-up promise then rejects with the last connect error, and
 * the handler BullMQ gave that promise in the constructor emits it as 'error'
 * on a connection that no longer has a listener, which throws inside the
 * handler: an unhandled rejection (taskforcesh/bullmq#3546, open). Only a stop
 * while Redis is away meets it, but there it fails a test file or turns a
 * clean stop into a crash. A listener added once `close()` is done takes that
 * last error: the connection is closed by then and nothing else listens.
 * QueueModule makes these the classes `@nestjs/bullmq` creates.
 */
function keepTakingErrors(connection: EventEmitter | undefined): void {
  connection?.on('error', () => undefined);
}

export class ServiceQueue extends Queue {
  override async close(): Promise<void> {
    try {
      await super.close();
    } finally {
      keepTakingErrors(this.connection);
    }
  }
}

export class ServiceWorker extends Worker {
  override async close(force?: boolean): Promise<void> {
    try {
      await super.close(force);
    } finally {
      keepTakingErrors(this.connection);
      // Private in BullMQ's types: the worker's own connection for its blocking reads.
      keepTakingErrors((this as unknown as { blockingConnection?: EventEmitter }).blockingConnection);
    }
  }
}
