import { LruMap } from '../../src/common/cache/lru-map';

describe('LruMap', () => {
  it('drops the least recently used entry when full', () => {
    const map = new LruMap<string, number>(2);
    map.set('a', 1);
    map.set('b', 2);
    expect(map.get('a')).toBe(1); // a is now the most recent
    map.set('c', 3);
    expect(map.get('b')).toBeUndefined();
    expect(map.get('a')).toBe(1);
    expect(map.get('c')).toBe(3);
    expect(map.size).toBe(2);
  });

  it('keeps entries that are read often while others come and go', () => {
    const map = new LruMap<string, number>(8);
    map.set('hot', 0);
    for (let i = 0; i < 100; i += 1) {
      map.set(`cold-${i}`, i);
      expect(map.get('hot')).toBe(0);
    }
    expect(map.size).toBe(8);
    expect(map.get('cold-91')).toBeUndefined();
    expect(map.get('cold-99')).toBe(99);
  });

  it('replaces a value without growing', () => {
    const map = new LruMap<string, number>(2);
    map.set('a', 1);
    map.set('a', 2);
    expect(map.size).toBe(1);
    expect(map.get('a')).toBe(2);
  });

  it('refuses a capacity below one', () => {
    expect(() => new LruMap(0)).toThrow(/capacity/);
  });
});
