/**
 * A Map bounded to `capacity` entries that drops the least recently used one
 * when full. Map iteration order is insertion order, so "used" means deleted
 * and inserted again and the first key is always the one to drop. A read moves
 * an entry only once it has aged past a quarter of the capacity: hot entries
 * are read without touching the Map, and the order stays close to true LRU (an
 * entry read at least once per three quarters of the capacity is never dropped).
 */
export class LruMap<K, V> {
  private readonly entries = new Map<K, { value: V; stamp: number }>();
  private clock = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new Error('capacity must be a positive integer');
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: K): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (this.clock - entry.stamp > this.capacity >> 2) {
      this.entries.delete(key);
      entry.stamp = ++this.clock;
      this.entries.set(key, entry);
    }
    return entry.value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, { value, stamp: ++this.clock });
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as K);
  }

  delete(key: K): boolean {
    return this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
