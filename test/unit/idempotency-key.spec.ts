import { createHash } from 'node:crypto';
import { ApiError } from '../../src/common/errors/api-error';
import { assertIdempotencyKey, canonicalJson, requestHash } from '../../src/common/idempotency/idempotency-key';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** What `assertIdempotencyKey` threw, or undefined when it accepted the key. */
function refusal(key: string): ApiError | undefined {
  try {
    assertIdempotencyKey(key);
    return undefined;
  } catch (error) {
    return error as ApiError;
  }
}

describe('idempotency keys', () => {
  describe('key shape: 1 to 255 visible ASCII characters', () => {
    it.each([
      ['one character', 'a'],
      ['the lowest visible character', '!'],
      ['the highest visible character', '~'],
      ['a UUID', '6f1c2b7e-2f0a-4c3e-9d1b-1a2b3c4d5e6f'],
      ['every visible ASCII character', Array.from({ length: 0x7e - 0x21 + 1 }, (_, i) => String.fromCharCode(0x21 + i)).join('')],
      ['255 characters', 'k'.repeat(255)],
    ])('accepts %s', (_name, key) => {
      expect(refusal(key)).toBeUndefined();
    });

    it.each([
      ['an empty key', ''],
      ['256 characters', 'k'.repeat(256)],
      ['a space', 'a b'],
      ['a leading space', ' ab'],
      ['a trailing newline', 'ab\n'],
      ['a leading newline', '\nab'],
      ['a tab', 'a\tb'],
      ['DEL (0x7f)', 'a\x7f'],
      ['a control character (0x20 - 1)', '\x1fab'],
      ['a non-ASCII letter', 'clé'],
      ['an emoji', 'key-🔑'],
    ])('refuses %s with BAD_REQUEST', (_name, key) => {
      const error = refusal(key);
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({
        code: 'BAD_REQUEST',
        status: 400,
        message: 'Idempotency-Key must be 1 to 255 visible ASCII characters',
      });
    });
  });

  describe('canonical JSON', () => {
    it('sorts object keys at every depth', () => {
      expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: 'x' } })).toBe('{"a":{"c":"x","d":[3,{"y":2,"z":1}]},"b":1}');
    });

    it('keeps array order, which is meaningful', () => {
      expect(canonicalJson([2, 1, 3])).toBe('[2,1,3]');
      expect(canonicalJson([])).toBe('[]');
    });

    it('writes an empty object as {}', () => {
      expect(canonicalJson({})).toBe('{}');
    });

    it('escapes keys and strings as JSON does', () => {
      expect(canonicalJson({ 'a"b': 'line\nbreak', é: '\u0000' })).toBe('{"a\\"b":"line\\nbreak","é":"\\u0000"}');
    });

    it.each([
      ['a number', 1.5, '1.5'],
      ['zero', 0, '0'],
      ['an empty string', '', '""'],
      ['false', false, 'false'],
      ['true', true, 'true'],
      ['null', null, 'null'],
      ['undefined (no body)', undefined, 'null'],
      ['a string', 'text', '"text"'],
    ])('writes %s as JSON', (_name, value, expected) => {
      expect(canonicalJson(value)).toBe(expected);
    });

    it('writes undefined inside an array or object as null, so the hash is defined', () => {
      expect(canonicalJson([undefined, 1])).toBe('[null,1]');
      expect(canonicalJson({ a: undefined })).toBe('{"a":null}');
    });

    it('reads a Date as an object with no own keys (bodies are parsed JSON, never Dates)', () => {
      expect(canonicalJson({ when: new Date(0) })).toBe('{"when":{}}');
    });

    it('tells apart values that differ only in type', () => {
      expect(canonicalJson({ a: 1 })).not.toBe(canonicalJson({ a: '1' }));
      expect(canonicalJson([1, 2])).not.toBe(canonicalJson({ 0: 1, 1: 2 }));
    });
  });

  describe('request hash', () => {
    it('is the hex SHA-256 of the canonical JSON', () => {
      expect(requestHash({ b: 2, a: 1 })).toBe(sha256('{"a":1,"b":2}'));
      expect(requestHash(undefined)).toBe(sha256('null'));
    });

    it('is the same for the same body with its keys in another order', () => {
      expect(requestHash({ to: ['con_1'], body: { text: 'hi', kind: 'text' } })).toBe(
        requestHash({ body: { kind: 'text', text: 'hi' }, to: ['con_1'] }),
      );
    });

    it('differs when any value differs', () => {
      expect(requestHash({ to: ['con_1'], text: 'hi' })).not.toBe(requestHash({ to: ['con_1'], text: 'hi!' }));
      expect(requestHash({ to: ['con_1', 'con_2'] })).not.toBe(requestHash({ to: ['con_2', 'con_1'] }));
    });
  });
});
