import { performance } from 'node:perf_hooks';

/** Most slots a heartbeat period is cut into: about 200 sockets a turn at 10,000 sockets. */
export const MAX_HEARTBEAT_SLOTS = 50;
/** Shortest time between two turns of the wheel, so a short period (tests) is not cut into needlessly fine slices. */
export const MIN_SLOT_MS = 25;

/** How many slots a period of `periodMs` gets: as many as fit at `MIN_SLOT_MS`, at most `MAX_HEARTBEAT_SLOTS`, at least one. */
export const heartbeatSlots = (periodMs: number): number => Math.max(1, Math.min(MAX_HEARTBEAT_SLOTS, Math.floor(periodMs / MIN_SLOT_MS)));

/**
 * A timer wheel: the period is cut into slots, each item lives in one slot (the
 * least loaded when it was added) and is visited once a period, at its slot's
 * phase. So per-item periodic work is spread over the period instead of done
 * for every item in one turn of the event loop.
 *
 * Turns follow the clock, not a count of timer callbacks: a turn the event loop
 * was too busy to take is taken late, never skipped, so every slot is still
 * visited once a period (at most one visit of each slot per catch-up).
 */
export class HeartbeatWheel<T> {
  readonly slotMs: number;
  private readonly slots: Array<Set<T>>;
  private readonly slotOf = new Map<T, number>();
  private timer: NodeJS.Timeout | null = null;
  private startedAt = 0;
  /** The last turn visited (turn n visits slot n mod slots). */
  private turn = 0;

  constructor(
    readonly periodMs: number,
    private readonly visit: (items: T[], slot: number) => void,
    readonly slotCount = heartbeatSlots(periodMs),
  ) {
    this.slotMs = periodMs / slotCount;
    this.slots = Array.from({ length: slotCount }, () => new Set<T>());
  }

  get size(): number {
    return this.slotOf.size;
  }

  start(): void {
    if (this.timer) return;
    this.startedAt = performance.now();
    this.turn = 0;
    this.timer = setInterval(() => this.advance(), this.slotMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Puts an item in the least loaded slot; answers the slot. */
  add(item: T): number {
    const known = this.slotOf.get(item);
    if (known !== undefined) return known;
    let slot = 0;
    for (let i = 1; i < this.slots.length; i += 1) if (this.slots[i].size < this.slots[slot].size) slot = i;
    this.slots[slot].add(item);
    this.slotOf.set(item, slot);
    return slot;
  }

  remove(item: T): void {
    const slot = this.slotOf.get(item);
    if (slot === undefined) return;
    this.slotOf.delete(item);
    this.slots[slot].delete(item);
  }

  /** Visits the slots whose turn has come since the last call (each at most once). Called by the timer; public for tests. */
  advance(now = performance.now()): void {
    const due = Math.floor((now - this.startedAt) / this.slotMs);
    if (due <= this.turn) return;
    const from = Math.max(this.turn + 1, due - this.slots.length + 1);
    this.turn = due;
    for (let turn = from; turn <= due; turn += 1) {
      const slot = turn % this.slots.length;
      this.visit([...this.slots[slot]], slot);
    }
  }
}
