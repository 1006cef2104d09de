import { assertCallableTarget, isPrivateAddress } from '../../src/common/http/target-policy';

describe('target policy (SSRF guard)', () => {
  it.each([
    '127.0.0.1',
    '10.0.0.8',
    '172.20.1.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '::1',
    'fd00::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
  ])('treats %s as private', (address) => expect(isPrivateAddress(address)).toBe(true));

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:5db8:d822'])('treats %s as public', (address) =>
    expect(isPrivateAddress(address)).toBe(false),
  );

  it.each([
    'https://[::ffff:127.0.0.1]/x',
    'https://127.1/x',
    'https://0x7f000001/x',
    'https://localhost/x',
    'https://metadata.internal/x',
  ])('refuses %s', async (url) => {
    await expect(assertCallableTarget(url, 'webhook_url', { allowPrivate: false })).rejects.toMatchObject({ code: 'invalid_format' });
  });

  it('refuses http and credentials, accepts a public https address', async () => {
    await expect(assertCallableTarget('http://93.184.216.34/', 'webhook_url', { allowPrivate: false })).rejects.toMatchObject({
      detail: expect.stringContaining('https'),
    });
    await expect(assertCallableTarget('https://u:p@93.184.216.34/', 'webhook_url', { allowPrivate: false })).rejects.toMatchObject({
      code: 'invalid_format',
    });
    await expect(assertCallableTarget('https://93.184.216.34/hooks', 'webhook_url', { allowPrivate: false })).resolves.toBeInstanceOf(URL);
  });
});
