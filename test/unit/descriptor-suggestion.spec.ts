import { nearestName } from '@soul-service/rules';

const CAPABILITY_FIELDS = [
  'type',
  'name',
  'description',
  'schema',
  'runtimeUrl',
  'refreshInterval',
  'surfaceGuidance',
  'responseSchema',
  'examples',
];

describe('the nearest known name of an unknown field', () => {
  it.each([
    ['responseschema', 'responseSchema'],
    ['RESPONSESCHEMA', 'responseSchema'],
    ['refreshIntervall', 'refreshInterval'],
    ['surfaceGuidence', 'surfaceGuidance'],
    ['runtimeURL', 'runtimeUrl'],
    ['shema', 'schema'],
    ['exmaples', 'examples'],
    ['nmae', 'name'],
  ])('suggests %s → %s', (unknown, expected) => {
    expect(nearestName(unknown, CAPABILITY_FIELDS)).toBe(expected);
  });

  it('prefers the same name in another case over a nearer spelling', () => {
    expect(nearestName('Type', ['typo', 'type'])).toBe('type');
  });

  it('suggests nothing when no known name is close enough to be a typo', () => {
    expect(nearestName('colour', CAPABILITY_FIELDS)).toBeUndefined();
    expect(nearestName('preferredComponents', CAPABILITY_FIELDS)).toBeUndefined();
    expect(nearestName('x', [])).toBeUndefined();
  });

  it('allows two edits for short names and a third of the length for long ones', () => {
    expect(nearestName('tpe', ['type'])).toBe('type');
    expect(nearestName('ab', ['type'])).toBeUndefined();
    expect(nearestName('heartbeat', ['heartbeatInterval'])).toBeUndefined();
    expect(nearestName('heartbeatIntrvl', ['heartbeatInterval'])).toBe('heartbeatInterval');
    // Exactly at the bound (17 letters: 5 edits) and one past it.
    expect(nearestName('heartbeatInt', ['heartbeatInterval'])).toBe('heartbeatInterval');
    expect(nearestName('heartbeatIn', ['heartbeatInterval'])).toBeUndefined();
  });

  it('breaks ties by the order of the known names', () => {
    expect(nearestName('bat', ['cat', 'hat'])).toBe('cat');
    expect(nearestName('bat', ['hat', 'cat'])).toBe('hat');
  });
});
