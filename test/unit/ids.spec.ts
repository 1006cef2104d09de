import { isId, newId } from '../../src/common/ids';

describe('newId', () => {
  it('has the prefix and 22 base62 characters', () => {
    expect(newId('usr')).toMatch(/^usr_[0-9A-Za-z]{22}$/);
  });

  it('does not repeat over many draws', () => {
    const ids = new Set(Array.from({ length: 50_000 }, () => newId('evt')));
    expect(ids.size).toBe(50_000);
  });

  it('recognises its own shape and prefix', () => {
    const id = newId('msg');
    expect(isId(id)).toBe(true);
    expect(isId(id, 'msg')).toBe(true);
    expect(isId(id, 'usr')).toBe(false);
    expect(isId('msg_short')).toBe(false);
    expect(isId(42)).toBe(false);
  });
});
