/** What a change records: the event's type and payload. */
export interface DomainEventInput {
  type: string;
  payload: Record<string, unknown>;
  /** Hold the event back from the subscribers this long after commit (a durable copy of work a fast path does first). */
  delayMs?: number;
}

/** A recorded event, as the subscribers receive it. */
export interface DomainEvent extends DomainEventInput {
  id: string;
  createdAt: Date;
}
