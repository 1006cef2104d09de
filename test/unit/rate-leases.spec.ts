import { LeaseOptions, RateLeases, Reservation, ReservationStore } from '../../src/common/rate-limit/rate-leases';

/**
 * RateLeases against a store that counts like the Redis script (reserve what is
 * wanted, cut to what the fullest window has left, at least one) on a clock the
 * test moves by hand. The Redis side is tested in rate-limits.spec.ts.
 */
class CountingStore implements ReservationStore {
  counts: number[];
  reservations: number[] = [];
  givenBack: Array<{ points: number; windows: number[] }> = [];
  failGiveBack = false;
  private gate: Promise<void> | null = null;

  constructor(
    private readonly limits: number[],
    private readonly windowMs: number[],
    private readonly clock: { now: number },
    private readonly startedAt = clock.now,
  ) {
    this.counts = limits.map(() => 0);
  }

  /** Holds the next reservation until `open()`: requests arriving meanwhile find it in flight. */
  hold(): () => void {
    let open!: () => void;
    this.gate = new Promise<void>((resolve) => (open = resolve));
    return () => open();
  }

  async reserve(wanted: number): Promise<Reservation> {
    this.reservations.push(wanted);
    if (this.gate) {
      const gate = this.gate;
      this.gate = null;
      await gate;
    }
    const left = Math.min(...this.limits.map((limit, i) => limit - this.counts[i]));
    const reserved = Math.max(1, Math.min(wanted, left));
    this.counts = this.counts.map((c) => c + reserved);
    return {
      reserved,
      windows: this.counts.map((consumed, i) => ({ consumed, msBeforeNext: this.startedAt + this.windowMs[i] - this.clock.now })),
    };
  }

  async giveBack(points: number, windows: number[]): Promise<void> {
    this.givenBack.push({ points, windows });
    if (this.failGiveBack) throw new Error('store away');
    for (const i of windows) this.counts[i] -= points;
  }
}

const clock = { now: 1_000_000 };
let giveBackErrors: unknown[];

function leases(overrides: Partial<LeaseOptions> = {}): RateLeases {
  return new RateLeases({
    hotThreshold: 4,
    sliceMs: 100,
    maxBlock: 10,
    leaseMs: 100,
    giveBackMarginMs: 250,
    // The lease on its own; reserving ahead is tested below, with it on (as in the service).
    refillAhead: false,
    keysKept: 100,
    now: () => clock.now,
    onGiveBackError: (error) => giveBackErrors.push(error),
    ...overrides,
  });
}

/** Lets the give-back promise chains run. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

beforeEach(() => {
  clock.now = 1_000_000;
  giveBackErrors = [];
  jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick'] });
});

afterEach(() => {
  jest.useRealTimers();
});

describe('RateLeases', () => {
  it('counts a cold key one request per reservation, as without leases', async () => {
    const store = new CountingStore([100], [60_000], clock);
    const l = leases();
    for (let i = 1; i <= 3; i++) {
      expect(await l.take('k', store)).toEqual([{ consumed: i, msBeforeNext: 60_000 - 40 * (i - 1) }]);
      clock.now += 40; // 3 requests over 120 ms: never 4 in a slice
    }
    expect(store.reservations).toEqual([1, 1, 1]);
  });

  it('reserves a block once a key is hot, spends it without the store, and reports each request as counted', async () => {
    const store = new CountingStore([100, 1000], [60_000, 86_400_000], clock);
    const l = leases();
    const seen: number[][] = [];
    for (let i = 0; i < 8; i++) seen.push((await l.take('k', store)).map((w) => w.consumed));
    // Three cold requests, then the fourth of the slice reserves 4, and the eighth, once those are spent, 8.
    expect(store.reservations).toEqual([1, 1, 1, 4, 8]);
    expect(seen).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
      [4, 4],
      [5, 5],
      [6, 6],
      [7, 7],
      [8, 8],
    ]);
    expect(store.counts).toEqual([15, 15]);
  });

  it('never reserves more than the fullest window has left, and refuses (counts one) once it is full', async () => {
    const store = new CountingStore([6, 1000], [60_000, 86_400_000], clock);
    const l = leases();
    const consumed: number[] = [];
    for (let i = 0; i < 9; i++) consumed.push((await l.take('k', store))[0].consumed);
    expect(consumed).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // Asked 1, 1, 1, then 4 (3 reserved: all that was left), then one each for the refused requests.
    expect(store.reservations.slice(0, 4)).toEqual([1, 1, 1, 4]);
    expect(store.counts).toEqual([9, 9]);
  });

  it('gives the unused points back when the lease ends, to the windows that are still current', async () => {
    const store = new CountingStore([100, 1000], [200, 86_400_000], clock);
    const l = leases();
    for (let i = 0; i < 4; i++) await l.take('k', store);
    expect(store.counts).toEqual([7, 7]); // 3 + a block of 4, one of it used
    // The minute-like window ends within the margin: its counter may be the next window's, so it gets nothing.
    clock.now += 100;
    jest.advanceTimersByTime(100);
    await settle();
    expect(store.givenBack).toEqual([{ points: 3, windows: [1] }]);
    expect(store.counts).toEqual([7, 4]);
    // Ended once: nothing more goes back later.
    jest.advanceTimersByTime(1000);
    await settle();
    expect(store.givenBack).toHaveLength(1);
  });

  it('a lease past its time is not spent: its unused points go back before the next reservation', async () => {
    const store = new CountingStore([100], [60_000], clock);
    const l = leases();
    for (let i = 0; i < 4; i++) await l.take('k', store);
    expect(store.counts).toEqual([7]);
    clock.now += 150; // past validUntil; the timer has not run yet
    const [after] = await l.take('k', store);
    expect(store.givenBack).toEqual([{ points: 3, windows: [0] }]);
    expect(after.consumed).toBe(5);
  });

  it('requests of a hot key that arrive during a reservation wait for it and spend from it', async () => {
    const store = new CountingStore([100], [60_000], clock);
    const l = leases();
    for (let i = 0; i < 3; i++) await l.take('k', store);
    const open = store.hold();
    const waiting = [l.take('k', store), l.take('k', store), l.take('k', store)];
    await settle();
    expect(store.reservations).toEqual([1, 1, 1, 4]);
    open();
    const counted = (await Promise.all(waiting)).map(([w]) => w.consumed).sort();
    expect(counted).toEqual([4, 5, 6]);
    expect(store.reservations).toEqual([1, 1, 1, 4]);
  });

  it('keeps keys apart', async () => {
    const a = new CountingStore([100], [60_000], clock);
    const b = new CountingStore([100], [60_000], clock);
    const l = leases();
    for (let i = 0; i < 5; i++) await l.take('a', a);
    expect((await l.take('b', b))[0].consumed).toBe(1);
    expect(b.reservations).toEqual([1]);
  });

  it('cools down: a key quiet for a slice reserves one at a time again', async () => {
    const store = new CountingStore([1000], [60_000], clock);
    const l = leases();
    for (let i = 0; i < 5; i++) await l.take('k', store);
    clock.now += 300;
    jest.advanceTimersByTime(300);
    await l.take('k', store);
    expect(store.reservations.at(-1)).toBe(1);
  });

  it('caps a block at maxBlock', async () => {
    const store = new CountingStore([1000], [60_000], clock);
    const l = leases({ maxBlock: 6 });
    for (let i = 0; i < 30; i++) await l.take('k', store);
    expect(Math.max(...store.reservations)).toBe(6);
  });

  it('a failed give-back is reported, and the points stay counted (stricter, never looser)', async () => {
    const store = new CountingStore([100], [60_000], clock);
    store.failGiveBack = true;
    const l = leases();
    for (let i = 0; i < 4; i++) await l.take('k', store);
    clock.now += 100;
    jest.advanceTimersByTime(100);
    await settle();
    expect(giveBackErrors).toHaveLength(1);
    expect(store.counts).toEqual([7]);
  });

  it('a failed reservation fails the request, and the next one reserves again', async () => {
    const store = new CountingStore([100], [60_000], clock);
    const l = leases();
    for (let i = 0; i < 3; i++) await l.take('k', store);
    const reserve = jest.spyOn(store, 'reserve').mockRejectedValueOnce(new Error('store away'));
    await expect(l.take('k', store)).rejects.toThrow('store away');
    reserve.mockRestore();
    expect((await l.take('k', store))[0].consumed).toBe(4);
  });

  /** Three cold requests and the hot fourth, which reserves a block of 4 (one of it spent). */
  const heatUp = async (l: RateLeases, store: ReservationStore, id = 'k') => {
    for (let i = 0; i < 4; i++) await l.take(id, store);
  };

  it('spends a lease until its last millisecond, not at it', async () => {
    const store = new CountingStore([100], [60_000], clock);
    const l = leases();
    await heatUp(l, store);
    clock.now += 99;
    jest.advanceTimersByTime(99);
    await l.take('k', store);
    expect(store.reservations).toEqual([1, 1, 1, 4]);
    clock.now += 1;
    await l.take('k', store);
    expect(store.reservations).toHaveLength(5);
  });

  it('reports the time left in each window from a lease, and never less than zero', async () => {
    const store = new CountingStore([100, 1000], [50, 60_000], clock);
    const l = leases();
    await heatUp(l, store);
    clock.now += 30;
    expect(await l.take('k', store)).toEqual([
      { consumed: 5, msBeforeNext: 20 },
      { consumed: 5, msBeforeNext: 59_970 },
    ]);
    clock.now += 40;
    expect(await l.take('k', store)).toEqual([
      { consumed: 6, msBeforeNext: 0 },
      { consumed: 6, msBeforeNext: 59_930 },
    ]);
  });

  it('lets cold requests of one key go to the store side by side', async () => {
    const store = new CountingStore([100], [60_000], clock);
    const l = leases();
    const open = store.hold();
    const both = Promise.all([l.take('k', store), l.take('k', store)]);
    await settle();
    expect(store.reservations).toEqual([1, 1]);
    open();
    expect((await both).map(([w]) => w.consumed).sort()).toEqual([1, 2]);
  });

  it('carries a key’s pace into the next slice only', async () => {
    const store = new CountingStore([1000], [60_000], clock);
    const l = leases({ maxBlock: 100 });
    for (let i = 0; i < 5; i++) await l.take('k', store);
    // The next slice starts hot with the last slice's pace (5), and the lease of 4 is spent.
    clock.now += 100;
    await l.take('k', store);
    await l.take('k', store);
    await l.take('k', store);
    expect(store.reservations).toEqual([1, 1, 1, 4, 5]);
    // Two slices later the pace is forgotten.
    clock.now += 200;
    jest.advanceTimersByTime(300);
    await l.take('k', store);
    expect(store.reservations.at(-1)).toBe(1);
  });

  it('keeps the pace of several keys at once', async () => {
    const store = new CountingStore([1000], [60_000], clock);
    const l = leases();
    for (let i = 0; i < 4; i++) {
      await l.take('a', store);
      await l.take('b', store);
    }
    expect(store.reservations).toEqual([1, 1, 1, 1, 1, 1, 4, 4]);
  });

  it('forgets every key’s pace once it knows keysKept keys', async () => {
    const store = new CountingStore([1000], [60_000], clock);
    const l = leases({ keysKept: 2 });
    for (let i = 0; i < 3; i++) await l.take('a', store);
    await l.take('b', store);
    await l.take('c', store); // a third key: the pace of a and b is forgotten
    await l.take('a', store);
    expect(store.reservations).toEqual([1, 1, 1, 1, 1, 1]);
  });

  it('ends every lease, giving back what is unused, once it holds keysKept leases and another key is hot', async () => {
    const store = new CountingStore([1000], [60_000], clock);
    const l = leases({ keysKept: 2 });
    await heatUp(l, store, 'a');
    await heatUp(l, store, 'b');
    expect(store.givenBack).toEqual([]);
    await heatUp(l, store, 'c');
    expect(store.givenBack).toEqual([
      { points: 3, windows: [0] },
      { points: 3, windows: [0] },
    ]);
    // A key that already holds a lease replaces its own: the others are kept.
    for (let i = 0; i < 3; i++) await l.take('c', store);
    await l.take('c', store);
    expect(store.givenBack).toHaveLength(2);
  });

  it('an old lease ending on time leaves the newer one of its key alone', async () => {
    const store = new CountingStore([1000], [60_000], clock);
    const l = leases();
    await heatUp(l, store);
    for (let i = 0; i < 3; i++) await l.take('k', store); // the first block spent
    clock.now += 50;
    await l.take('k', store); // a new block, valid 50 ms past the first one's end
    const reservations = store.reservations.length;
    clock.now += 50;
    jest.advanceTimersByTime(50);
    await settle();
    await l.take('k', store);
    expect(store.reservations).toHaveLength(reservations);
  });

  it('gives nothing back for a lease that was spent, or whose windows all end within the margin', async () => {
    const spent = new CountingStore([1000], [60_000], clock);
    const l = leases();
    await heatUp(l, spent);
    for (let i = 0; i < 3; i++) await l.take('k', spent);
    clock.now += 100;
    jest.advanceTimersByTime(100);
    await settle();
    expect(spent.givenBack).toEqual([]);

    const ending = new CountingStore([1000], [350], clock, clock.now);
    await heatUp(l, ending, 'short');
    clock.now += 100;
    jest.advanceTimersByTime(100);
    await settle();
    // 250 ms left of the window at the lease's end: exactly the margin, so nothing goes back.
    expect(ending.givenBack).toEqual([]);
  });
});

describe('RateLeases: answering at once from a lease (takeLeased)', () => {
  it('answers nothing and counts nothing for a key without a lease, then spends a lease without a promise', async () => {
    const store = new CountingStore([100], [60_000], clock);
    const l = leases();
    for (let i = 0; i < 5; i++) expect(l.takeLeased('k')).toBeUndefined();
    // The misses did not count towards the key's pace: three cold requests still go one at a time.
    for (let i = 0; i < 3; i++) await l.take('k', store);
    expect(store.reservations).toEqual([1, 1, 1]);
    await l.take('k', store); // hot: a block of 4, one of it spent
    expect(l.takeLeased('k')).toEqual([{ consumed: 5, msBeforeNext: 60_000 }]);
    expect(l.takeLeased('k')).toEqual([{ consumed: 6, msBeforeNext: 60_000 }]);
    expect(l.takeLeased('k')).toEqual([{ consumed: 7, msBeforeNext: 60_000 }]);
    // Spent: nothing more at once, and nothing counted.
    expect(l.takeLeased('k')).toBeUndefined();
    expect(store.reservations).toEqual([1, 1, 1, 4]);
    expect(store.counts).toEqual([7]);
  });

  it('keeps the pace of the requests it answers', async () => {
    const store = new CountingStore([1000], [60_000], clock);
    const l = leases({ maxBlock: 100 });
    for (let i = 0; i < 4; i++) await l.take('k', store);
    for (let i = 0; i < 3; i++) l.takeLeased('k');
    // Seven requests in this slice: the next block asks for 8 with the eighth.
    await l.take('k', store);
    expect(store.reservations).toEqual([1, 1, 1, 4, 8]);
  });

  it('answers nothing from a lease past its time', async () => {
    const store = new CountingStore([100], [60_000], clock);
    const l = leases();
    for (let i = 0; i < 4; i++) await l.take('k', store);
    clock.now += 99;
    expect(l.takeLeased('k')).toEqual([{ consumed: 5, msBeforeNext: 59_901 }]);
    clock.now += 1;
    expect(l.takeLeased('k')).toBeUndefined();
  });
});

describe('RateLeases: the next block reserved ahead (refillAhead)', () => {
  const ahead = (overrides: Partial<LeaseOptions> = {}) => leases({ refillAhead: true, ...overrides });
  /** Three cold requests and the hot fourth, which reserves a block of 4 (one of it spent). */
  const heatUp = async (l: RateLeases, store: ReservationStore) => {
    for (let i = 0; i < 4; i++) await l.take('k', store);
  };

  it('reserves the next block once half of the lease is spent, and the unspent points join it', async () => {
    const store = new CountingStore([1000, 10_000], [60_000, 86_400_000], clock);
    const l = ahead();
    await heatUp(l, store);
    expect(store.reservations).toEqual([1, 1, 1, 4]);
    // The fifth request leaves 2 of the 4: the next block (the key's pace, 5) is reserved at once.
    expect(l.takeLeased('k')?.map((w) => w.consumed)).toEqual([5, 5]);
    expect(store.reservations).toEqual([1, 1, 1, 4, 5]);
    await settle();
    // 2 left of the first block and 5 of the next: seven requests more from memory, counted in turn.
    const seen: number[] = [];
    for (let i = 0; i < 7; i++) seen.push(l.takeLeased('k')![0].consumed);
    expect(seen).toEqual([6, 7, 8, 9, 10, 11, 12]);
    expect(store.reservations.length).toBeGreaterThan(5); // the next one, ahead again
    expect(store.counts[0]).toBe(store.reservations.reduce((a, b) => a + b));
  });

  it('lets requests spend from the lease while the next block is on its way, and the one past it wait for that block', async () => {
    const store = new CountingStore([1000], [60_000], clock);
    const l = ahead();
    await heatUp(l, store);
    const open = store.hold();
    expect(l.takeLeased('k')).toEqual([{ consumed: 5, msBeforeNext: 60_000 }]);
    await settle();
    expect(store.reservations).toEqual([1, 1, 1, 4, 5]);
    // The reservation is held: the lease's last two points are spent, then the lease has nothing at once.
    expect(l.takeLeased('k')?.[0].consumed).toBe(6);
    expect(l.takeLeased('k')?.[0].consumed).toBe(7);
    expect(l.takeLeased('k')).toBeUndefined();
    const waiting = l.take('k', store);
    await settle();
    expect(store.reservations).toEqual([1, 1, 1, 4, 5]); // no second reservation: it waits for the first
    open();
    expect((await waiting)[0].consumed).toBe(8);
    expect(store.reservations).toEqual([1, 1, 1, 4, 5]);
  });

  it('does not carry points over into a block counted after one of the lease’s windows may have ended: they go back', async () => {
    const store = new CountingStore([1000, 10_000], [330, 60_000], clock);
    const l = ahead();
    await heatUp(l, store); // the short window ends 330 ms from now
    const open = store.hold();
    l.takeLeased('k'); // 2 of the block left; the next is reserved
    clock.now += 90; // 240 ms left of the short window: inside the margin
    open();
    await settle();
    // The old lease's 2 unspent points went back, to the long window only; the new block stands alone. Its counts
    // were read before those points went back, so it reports them as used until it ends (stricter, never looser).
    expect(store.givenBack).toEqual([{ points: 2, windows: [1] }]);
    expect(l.takeLeased('k')?.map((w) => w.consumed)).toEqual([8, 8]);
  });

  it('carries points over while every window of the lease ends later than the margin', async () => {
    const store = new CountingStore([1000, 10_000], [340, 60_000], clock);
    const l = ahead();
    await heatUp(l, store);
    const open = store.hold();
    l.takeLeased('k');
    clock.now += 89; // 251 ms left of the short window
    open();
    await settle();
    expect(store.givenBack).toEqual([]);
    // 5 + 4 counted before the block of 5; 7 of them (2 carried over, 5 new) unspent.
    expect(l.takeLeased('k')?.map((w) => w.consumed)).toEqual([6, 6]);
  });

  it('lets a block stand alone when the lease it was made for ended before it arrived', async () => {
    const store = new CountingStore([1000], [60_000], clock);
    const l = ahead();
    await heatUp(l, store); // a lease until 100 ms from now
    clock.now += 40;
    const open = store.hold();
    l.takeLeased('k'); // the next block, valid until 140 ms from the start
    clock.now += 60;
    jest.advanceTimersByTime(100); // the lease ends: its 2 unspent points go back
    await settle();
    expect(store.givenBack).toEqual([{ points: 2, windows: [0] }]);
    open();
    await settle();
    expect(store.counts).toEqual([3 + 4 - 2 + 5]);
    expect(l.takeLeased('k')).toEqual([{ consumed: 6, msBeforeNext: 59_900 }]);
    expect(store.givenBack).toHaveLength(1);
  });

  it('gives a block of one point back at once: near the floor every request is counted on its own', async () => {
    const store = new CountingStore([8], [60_000], clock);
    const l = ahead();
    await heatUp(l, store); // 7 counted: 1 left
    l.takeLeased('k');
    await settle();
    expect(store.reservations).toEqual([1, 1, 1, 4, 5]); // 5 asked, 1 reserved
    expect(store.givenBack).toEqual([{ points: 1, windows: [0] }]);
    expect(store.counts).toEqual([7]);
    // The lease itself is still spent as before.
    expect(l.takeLeased('k')?.[0].consumed).toBe(6);
  });

  it('keeps a block of two reserved ahead as a lease, with the points left of the old one', async () => {
    const store = new CountingStore([9], [60_000], clock);
    const l = ahead();
    await heatUp(l, store); // 7 counted: 2 left
    l.takeLeased('k'); // 5 asked, 2 reserved
    await settle();
    expect(store.givenBack).toEqual([]);
    const seen: number[] = [];
    for (let i = 0; i < 4; i++) seen.push(l.takeLeased('k')![0].consumed);
    expect(seen).toEqual([6, 7, 8, 9]);
    // The next block, asked for once half of that lease was spent, found the window full: its one point went back.
    await settle();
    expect(store.givenBack).toEqual([{ points: 1, windows: [0] }]);
    expect(store.counts).toEqual([9]);
  });

  it('carries over the points of a lease past its time whose timer has not run yet: they were counted in the same windows', async () => {
    const store = new CountingStore([1000], [60_000], clock);
    const l = ahead();
    await heatUp(l, store); // a lease until 100 ms from now
    clock.now += 40;
    const open = store.hold();
    l.takeLeased('k'); // the next block, valid until 140 ms from the start
    clock.now += 70; // the old lease is past its time; its timer has not run
    open();
    await settle();
    expect(l.takeLeased('k')).toEqual([{ consumed: 3 + 4 - 2 + 1, msBeforeNext: 59_890 }]);
    jest.advanceTimersByTime(100); // both leases' timers: the new one had 7 points, one of them spent
    await settle();
    expect(store.givenBack).toEqual([{ points: 6, windows: [0] }]);
    expect(store.counts).toEqual([6]);
  });

  it('loses nothing when the reservation ahead fails: the lease is spent, and the request past it reserves again', async () => {
    const store = new CountingStore([1000], [60_000], clock);
    const l = ahead();
    await heatUp(l, store);
    const reserve = jest.spyOn(store, 'reserve').mockRejectedValueOnce(new Error('store away'));
    l.takeLeased('k');
    await settle();
    reserve.mockRestore();
    expect(l.takeLeased('k')?.[0].consumed).toBe(6);
    expect(l.takeLeased('k')?.[0].consumed).toBe(7);
    expect((await l.take('k', store))[0].consumed).toBe(8);
    expect(giveBackErrors).toEqual([]);
  });

  it('reserves nothing ahead for a key that has cooled down', async () => {
    const store = new CountingStore([1000], [60_000], clock);
    const l = ahead();
    await heatUp(l, store);
    clock.now += 250; // two slices later: the pace is forgotten
    jest.advanceTimersByTime(250);
    await settle();
    await l.take('k', store); // the lease ended; a cold request
    expect(store.reservations).toEqual([1, 1, 1, 4, 1]);
  });
});
