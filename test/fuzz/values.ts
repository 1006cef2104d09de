import fc from 'fast-check';

/**
 * Symbolic values that generated cases carry instead of concrete ones, so a
 * counterexample prints short and replays the same way in a fresh environment:
 * ids differ from run to run (CSPRNG), the kind of id a case uses does not.
 */

/** Kinds of real values the fuzz world holds (ids, secrets, URLs), resolved at send time. */
export type RefKind =
  | 'contact'
  | 'group'
  | 'package'
  | 'version'
  | 'slug'
  | 'app'
  | 'install'
  | 'confirmation'
  | 'action'
  | 'export'
  | 'delivery'
  | 'conf'
  | 'capability'
  | 'placement'
  | 'user'
  | 'victimUser'
  | 'clientId'
  | 'clientSecret'
  | 'firebaseToken'
  | 'now'
  | 'runtimeUrl'
  | 'webhookUrl'
  | 'redirectUri';

/** Ids of every kind the world creates: a path or field of one kind is also fed the others. */
export const ID_KINDS: RefKind[] = [
  'contact',
  'group',
  'package',
  'version',
  'app',
  'install',
  'confirmation',
  'action',
  'export',
  'delivery',
  'conf',
  'user',
  'clientId',
];

export class Ref {
  constructor(readonly kind: RefKind) {}
  [fc.toStringMethod](): string {
    return `ref(${this.kind})`;
  }
}

/** `unit` repeated `times` times: a huge string that prints short. */
export class Repeat {
  constructor(
    readonly unit: string,
    readonly times: number,
  ) {}
  [fc.toStringMethod](): string {
    return `repeat(${JSON.stringify(this.unit)}, ${this.times})`;
  }
}

/** An array of `times` copies of `item`. */
export class Many {
  constructor(
    readonly item: unknown,
    readonly times: number,
  ) {}
  [fc.toStringMethod](): string {
    return `many(${fc.stringify(this.item)}, ${this.times})`;
  }
}

/** Nesting `depth` levels deep: `[[[…]]]` or `{"a":{"a":…}}`. */
export class Deep {
  constructor(
    readonly shape: 'array' | 'object',
    readonly depth: number,
  ) {}
  [fc.toStringMethod](): string {
    return `deep(${this.shape}, ${this.depth})`;
  }
}

/** Text put into a path or query unencoded (invalid percent-escapes, encoded lone surrogates), or sent as the raw body. */
export class Raw {
  constructor(readonly text: string) {}
  [fc.toStringMethod](): string {
    return `raw(${JSON.stringify(this.text)})`;
  }
}

/** A field, parameter or body left out. */
export class Omitted {
  [fc.toStringMethod](): string {
    return 'omitted';
  }
}
export const OMIT = new Omitted();

export const LONE_SURROGATE = 'a\ud800b';
export const FORTY_DIGITS = '1234567890'.repeat(4);

/** Strings that break parsers, validators, databases and renderers. */
export const HOSTILE_STRINGS: string[] = [
  '',
  ' ',
  '\t\r\n',
  LONE_SURROGATE,
  '\ud800',
  '\udc00',
  'x\udfff\ud800y',
  'a\u0000b',
  '\u0000',
  '\u202eevil\u202c',
  '\ufeffbom',
  'e\u0301\u0301\u0301',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢 🧨👩‍👩‍👧',
  '\uffff\ufffe',
  "'; DROP TABLE users; --",
  "' OR '1'='1",
  '<script>alert(1)</script>',
  '{{7*7}}${7*7}',
  '../../../../etc/passwd',
  '%00%ff',
  '%s%s%n',
  '__proto__',
  'constructor',
  'null',
  'true',
  'NaN',
  'Infinity',
  '-1',
  '1e40',
  '0x1F',
  '１２３',
  FORTY_DIGITS,
  'a@',
  '@example.com',
  'a@b@example.com',
  'a b@example.com',
  `${LONE_SURROGATE}@example.com`,
  `${'a'.repeat(300)}@example.com`,
  'ada@exa\u0000mple.com',
  '"quoted"@example.com',
  'javascript:alert(1)',
  'http://127.0.0.1:1/',
  'https://169.254.169.254/latest/meta-data',
  'file:///etc/passwd',
  'https://',
  `https://a${LONE_SURROGATE}.example/`,
  'https://[::1]/x',
  '//evil.example/x',
  '2026-13-45T99:99:99Z',
  '0000-00-00T00:00:00Z',
];

/** Strings safe to put in an HTTP header (printable ASCII only: Node refuses anything else before sending). */
export const HOSTILE_HEADER_VALUES: unknown[] = [
  '',
  ' ',
  'a b',
  "'; DROP TABLE idempotency; --",
  '../../etc/passwd',
  FORTY_DIGITS,
  new Repeat('k', 8000),
  '%00',
  '\t',
];

/** Path segments that arrive as they are: bad escapes, an encoded lone surrogate, NUL, dot segments, encoded slashes. */
export const RAW_SEGMENTS: Raw[] = [
  new Raw('%ED%A0%80'),
  new Raw('a%ED%B0%80b'),
  new Raw('%00'),
  new Raw('%zz'),
  new Raw('%'),
  new Raw('%2e%2e'),
  new Raw('..%2F..%2Fetc'),
  new Raw('%C0%AF'),
  new Raw('%FF%FE'),
];

/** Bodies that are not well-formed JSON, or are JSON with a lone surrogate escape written out. */
export const RAW_BODIES: Raw[] = [
  new Raw('{'),
  new Raw('{"a":1,}'),
  new Raw("{'a':1}"),
  new Raw('NaN'),
  new Raw('\u0000'),
  new Raw('{"name":"\\ud800","email":"\\udc00@example.com"}'),
  new Raw('{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}'),
];

export const HUGE_STRINGS: Repeat[] = [
  new Repeat('x', 100_000),
  new Repeat('é', 50_000),
  new Repeat('\ud800', 1_000),
  new Repeat('a\u0000', 10_000),
];

export const HOSTILE_NUMBERS: unknown[] = [
  -1,
  0,
  1.5,
  -1.5,
  1e40,
  -1e40,
  1e308,
  2 ** 53 + 2,
  4_294_967_296,
  'NaN',
  'Infinity',
  '-Infinity',
  '1e40',
  '-1',
  '0x10',
  ' 1',
  '１',
  FORTY_DIGITS,
];

export interface ResolveContext {
  ref(kind: RefKind): string;
}

/** Turns a generated value into the JSON-able value it stands for; omitted fields disappear. */
export function resolve(value: unknown, context: ResolveContext): unknown {
  if (value instanceof Ref) return context.ref(value.kind);
  if (value instanceof Repeat) return value.unit.repeat(value.times);
  if (value instanceof Raw) return value.text;
  if (value instanceof Many) {
    const item = resolve(value.item, context);
    return Array.from({ length: value.times }, () => item);
  }
  if (value instanceof Deep) {
    let nested: unknown = value.shape === 'array' ? [] : {};
    for (let i = 0; i < value.depth; i += 1) nested = value.shape === 'array' ? [nested] : { a: nested };
    return nested;
  }
  if (Array.isArray(value)) return value.filter((v) => !(v instanceof Omitted)).map((v) => resolve(v, context));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, v] of Object.entries(value)) {
      if (v instanceof Omitted) continue;
      // defineProperty: a generated `__proto__` key stays an own, serialisable property.
      Object.defineProperty(out, key, { value: resolve(v, context), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return value;
}

function utf8Bytes(codePoint: number): number[] {
  if (codePoint < 0x80) return [codePoint];
  if (codePoint < 0x800) return [0xc0 | (codePoint >> 6), 0x80 | (codePoint & 0x3f)];
  // Lone surrogates land here too and come out as their generalized UTF-8 (WTF-8) bytes: ill-formed on purpose.
  if (codePoint < 0x10000) return [0xe0 | (codePoint >> 12), 0x80 | ((codePoint >> 6) & 0x3f), 0x80 | (codePoint & 0x3f)];
  return [0xf0 | (codePoint >> 18), 0x80 | ((codePoint >> 12) & 0x3f), 0x80 | ((codePoint >> 6) & 0x3f), 0x80 | (codePoint & 0x3f)];
}

/**
 * Percent-encodes a path segment or query value byte by byte. Unlike
 * encodeURIComponent it does not throw on a lone surrogate: it sends its
 * (ill-formed) three bytes, which is what a hostile client would do.
 */
export function percentEncode(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (/[A-Za-z0-9\-._~]/.test(text[i])) {
      out += text[i];
      continue;
    }
    let codePoint = unit;
    if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        codePoint = 0x10000 + ((unit - 0xd800) << 10) + (next - 0xdc00);
        i += 1;
      }
    }
    for (const byte of utf8Bytes(codePoint)) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/**
 * JSON text of a generated value. Deep nesting is written out as text: building
 * thousands of levels as objects and stringifying them would overflow the test's
 * own stack before the service ever saw the request.
 */
export function toJson(value: unknown, context: ResolveContext): string {
  if (value instanceof Deep) {
    return value.shape === 'array'
      ? `${'['.repeat(value.depth)}${']'.repeat(value.depth)}`
      : `${'{"a":'.repeat(value.depth)}{}${'}'.repeat(value.depth)}`;
  }
  if (value instanceof Ref || value instanceof Repeat || value instanceof Raw) return JSON.stringify(resolve(value, context));
  if (value instanceof Many) return `[${Array.from({ length: value.times }, () => toJson(value.item, context)).join(',')}]`;
  if (Array.isArray(value))
    return `[${value
      .filter((v) => !(v instanceof Omitted))
      .map((v) => toJson(v, context))
      .join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const members = Object.entries(value)
      .filter(([, v]) => !(v instanceof Omitted))
      .map(([key, v]) => `${JSON.stringify(key)}:${toJson(v, context)}`);
    return `{${members.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
