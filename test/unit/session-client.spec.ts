import { describeClient, MAX_USER_AGENT_LENGTH, sessionClient } from '../../src/modules/access/session-client';

describe('session clients (GET /v1/sessions)', () => {
  it.each([
    ['Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', 'Firefox on Linux'],
    [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
      'Chrome on Windows',
    ],
    [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0',
      'Edge on Windows',
    ],
    ['Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/120.0.0.0 Safari/537.36', 'Chrome on Linux'],
    [
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
      'Safari on macOS',
    ],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
      'Safari on iOS',
    ],
    [
      'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Mobile Safari/537.36 OPR/82.0',
      'Opera on Android',
    ],
    ['curl/8.5.0', 'curl'],
    ['node-fetch', 'node-fetch'],
  ])('describes %s as %s', (agent, description) => {
    expect(describeClient(agent)).toBe(description);
  });

  it('names a session without a User-Agent an unknown client', () => {
    expect(describeClient(null)).toBe('Unknown client');
  });

  it('keeps a bounded User-Agent without control characters, and null for empty values', () => {
    expect(sessionClient(`a\u0000b\nc${'x'.repeat(1000)}`, '203.0.113.7')).toEqual({
      userAgent: `abc${'x'.repeat(MAX_USER_AGENT_LENGTH - 3)}`,
      ipAddress: '203.0.113.7',
    });
    expect(sessionClient('  ', '')).toEqual({ userAgent: null, ipAddress: null });
    expect(sessionClient(undefined, undefined)).toEqual({ userAgent: null, ipAddress: null });
  });
});
