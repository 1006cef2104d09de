/** One window's count after a request was counted, and the time left in that window. */
export interface WindowCount {
  consumed: number;
  msBeforeNext: number;
}

/** What the shared store answered to a reservation: the points it reserved and each window's count after them. */
export interface Reservation {
  reserved: number;
  windows: WindowCount[];
}

/** The store side of leasing: reserve up to `wanted` points in every window at once, and give unused ones back. */
export interface ReservationStore {
  /** Counts `wanted` requests, fewer where a window has fewer left (at least one: a refused request is counted too). */
  reserve(wanted: number): Promise<Reservation>;
  /** Uncounts `points` in the windows (by index) that are still the windows they were reserved in. */
  giveBack(points: number, windowIndexes: number[]): Promise<void>;
}

export interface LeaseOptions {
  /** Requests of one key within one slice of this process that make the key hot. */
  hotThreshold: number;
  sliceMs: number;
  /** Most points reserved at once. */
  maxBlock: number;
  /** How long reserved points may be used before the unused ones go back. */
  leaseMs: number;
  /** A window ending sooner than this gets nothing back: its counter may already be a new window's. */
  giveBackMarginMs: number;
  /**
   * Whether a hot key's next block is reserved once half of its lease is
   * spent, so that requests keep spending from memory during the round trip
   * (rather than all waiting for it once the lease runs out).
   */
  refillAhead: boolean;
  /** Most keys remembered (their pace, their leases); past it they are forgotten, the leases ended. */
  keysKept: number;
  now: () => number;
  /** Where a failed give-back goes (the points then stay counted until their window ends: stricter, never looser). */
  onGiveBackError: (error: unknown) => void;
}

export const DEFAULT_LEASE_OPTIONS: Omit<LeaseOptions, 'onGiveBackError'> = {
  hotThreshold: 8,
  sliceMs: 100,
  // Blocks of up to 64, reserved when the lease runs out: measured against blocks of 512 reserved ahead (which kept
  // 99.7 % of a hot key's requests off Redis), this costs fewer CPU microseconds per request, not more, because the
  // requests that wait for a reservation are answered together (docs/decisions.md, "A hot key's next block").
  maxBlock: 64,
  leaseMs: 100,
  giveBackMarginMs: 250,
  refillAhead: false,
  keysKept: 10_000,
  now: Date.now,
};

interface Lease {
  reserved: number;
  used: number;
  /** Points of the reservation that made it: the next one is made ahead once half as many are left. */
  block: number;
  /** Each window's count right after the reservation, and when it ends (this process's clock). */
  windows: Array<{ consumed: number; endsAt: number }>;
  validUntil: number;
  store: ReservationStore;
}

interface Heat {
  slice: number;
  count: number;
  previous: number;
}

/**
 * Rate-limit counting for keys this process sees many requests of at once
 * (one user hammering an endpoint): instead of one round trip to the shared
 * counters per request, a hot key reserves a block of points in every window
 * in one round trip and spends them here. Every request is still counted in
 * the shared windows before it is answered, and a block is never larger than
 * what the windows have left, so no instance admits more than the limit; the
 * points a lease did not use go back when it ends, so a quiet key is not
 * charged for them. A cold key (fewer than `hotThreshold` requests in a slice)
 * reserves exactly one point per request, as if there were no leases.
 *
 * What it costs: another instance sees the block as used for up to `leaseMs`,
 * so near the limit it may refuse a request this instance would have admitted
 * (stricter, never looser), and the `X-RateLimit-Remaining` a lease reports
 * counts other instances' requests as of its reservation.
 */
export class RateLeases {
  private readonly leases = new Map<string, Lease>();
  private readonly pending = new Map<string, Promise<unknown>>();
  private readonly heat = new Map<string, Heat>();

  constructor(private readonly options: LeaseOptions) {}

  /**
   * Counts one request of `id` from the lease this process holds for it, at
   * once, when the lease has points left and has not ended; undefined
   * otherwise, and then nothing is counted (call `take`). The common case of
   * a hot key is answered without a promise.
   */
  takeLeased(id: string): WindowCount[] | undefined {
    const lease = this.leases.get(id);
    if (!lease) return undefined;
    const now = this.options.now();
    if (lease.used >= lease.reserved || now >= lease.validUntil) return undefined;
    return this.spend(id, lease, now, this.wanted(id));
  }

  /** Counts one request of `id` and answers each window's count after it. */
  async take(id: string, store: ReservationStore): Promise<WindowCount[]> {
    const wanted = this.wanted(id);
    for (;;) {
      const now = this.options.now();
      const lease = this.leases.get(id);
      if (lease) {
        if (lease.used < lease.reserved && now < lease.validUntil) return this.spend(id, lease, now, wanted);
        // Spent or over: its unused points go back first (the store's commands run in order), then a new reservation.
        this.end(id, lease);
      }
      if (wanted === 1) return this.reserve(id, 1, store, now);
      // A hot key: one reservation at a time, the others spend from it once it arrives.
      const inFlight = this.pending.get(id);
      if (inFlight) {
        await inFlight.catch(() => undefined);
        continue;
      }
      const reservation = this.reserve(id, wanted, store, now);
      this.pending.set(id, reservation);
      try {
        return await reservation;
      } finally {
        // Requests that spent from it meanwhile may have started the next reservation: that one stays pending.
        if (this.pending.get(id) === reservation) this.pending.delete(id);
      }
    }
  }

  /** How many points a reservation for `id` asks for now: 1, or the key's recent pace up to `maxBlock`. */
  private wanted(id: string): number {
    const { sliceMs, hotThreshold, maxBlock } = this.options;
    const slice = Math.floor(this.options.now() / sliceMs);
    let heat = this.heat.get(id);
    if (!heat) {
      if (this.heat.size >= this.options.keysKept) this.heat.clear();
      heat = { slice, count: 0, previous: 0 };
      this.heat.set(id, heat);
    } else if (heat.slice !== slice) {
      heat.previous = heat.slice === slice - 1 ? heat.count : 0;
      heat.slice = slice;
      heat.count = 0;
    }
    heat.count += 1;
    const pace = Math.max(heat.count, heat.previous);
    return pace < hotThreshold ? 1 : Math.min(maxBlock, pace);
  }

  private async reserve(id: string, wanted: number, store: ReservationStore, since: number): Promise<WindowCount[]> {
    const { reserved, windows } = await store.reserve(wanted);
    const now = this.options.now();
    if (reserved > 1) {
      const lease: Lease = {
        reserved,
        used: 1,
        block: reserved,
        windows: windows.map((w) => ({ consumed: w.consumed, endsAt: now + w.msBeforeNext })),
        validUntil: since + this.options.leaseMs,
        store,
      };
      this.keep(id, lease);
    }
    // This request is the first of the reservation: the others are not spent yet.
    return windows.map((w) => ({ consumed: w.consumed - (reserved - 1), msBeforeNext: w.msBeforeNext }));
  }

  /** Remembers the lease and gives back what it has not used when it ends. */
  private keep(id: string, lease: Lease): void {
    if (this.leases.size >= this.options.keysKept && !this.leases.has(id)) {
      for (const [other, old] of this.leases) this.end(other, old);
    }
    const previous = this.leases.get(id);
    if (previous) this.end(id, previous);
    this.leases.set(id, lease);
    setTimeout(() => this.end(id, lease), Math.max(0, lease.validUntil - this.options.now())).unref();
  }

  /** Ends a lease: no more spending from it, and its unused points go back to the windows still current. */
  private end(id: string, lease: Lease): void {
    if (this.leases.get(id) === lease) this.leases.delete(id);
    const unused = lease.reserved - lease.used;
    lease.reserved = lease.used;
    if (unused > 0) this.giveBack(lease.store, unused, lease.windows, this.options.now());
  }

  /** Gives `points` back to those of `windows` that are still current (see `current`). */
  private giveBack(store: ReservationStore, points: number, windows: Array<{ endsAt: number }>, now: number): void {
    const current = windows.flatMap((w, index) => (this.current(w, now) ? [index] : []));
    if (current.length > 0) store.giveBack(points, current).catch(this.options.onGiveBackError);
  }

  /** Whether a window ends later than the give-back margin: a counter that ends sooner may already be the next window's. */
  private current(window: { endsAt: number }, now: number): boolean {
    return window.endsAt - now > this.options.giveBackMarginMs;
  }

  /**
   * Reserves the next block of a hot key ahead of need, while its lease still
   * has points, so that requests keep spending without waiting for the round
   * trip. One reservation per key at a time, as in `take`: requests that run
   * out before it arrives wait for it there.
   */
  private refill(id: string, lease: Lease, wanted: number): void {
    const since = this.options.now();
    const reservation = lease.store.reserve(wanted).then(
      (reserved) => this.extend(id, lease, reserved, since),
      // Nothing is lost: the next request past this lease reserves itself, and meets the failure there.
      () => undefined,
    );
    this.pending.set(id, reservation);
    void reservation.then(() => {
      if (this.pending.get(id) === reservation) this.pending.delete(id);
    });
  }

  /**
   * A block reserved ahead becomes the key's lease. The points the lease it
   * was made for has not spent (none once that lease has ended) carry over
   * into it while every window of that lease is still current, so the block
   * was counted in the same windows; otherwise they go back as the old lease
   * ends. A block of one point means the windows are near their floor, where
   * every request is counted on its own: it goes back at once.
   */
  private extend(id: string, old: Lease, { reserved, windows }: Reservation, since: number): void {
    const now = this.options.now();
    const counted = windows.map((w) => ({ consumed: w.consumed, endsAt: now + w.msBeforeNext }));
    if (reserved < 2) return this.giveBack(old.store, reserved, counted, now);
    const lease: Lease = {
      reserved,
      used: 0,
      block: reserved,
      windows: counted,
      validUntil: since + this.options.leaseMs,
      store: old.store,
    };
    if (old.windows.every((w) => this.current(w, now))) {
      lease.reserved += old.reserved - old.used;
      old.reserved = old.used;
    }
    this.keep(id, lease);
  }

  /** Spends one point of the lease, and reserves the next block ahead once half of this one is spent. */
  private spend(id: string, lease: Lease, now: number, wanted: number): WindowCount[] {
    lease.used += 1;
    if (this.options.refillAhead && wanted > 1 && 2 * (lease.reserved - lease.used) <= lease.block && !this.pending.has(id))
      this.refill(id, lease, wanted);
    // As counted by the reservation, less the points of it not spent yet.
    return lease.windows.map((w) => ({
      consumed: w.consumed - (lease.reserved - lease.used),
      msBeforeNext: Math.max(0, w.endsAt - now),
    }));
  }
}
