import type { LookupAddress } from 'node:dns';
import { assertCallableTarget, DnsLookup, isCallableAddress, isPrivateAddress } from '../../src/common/http/target-policy';
import { checkedLookup, OutboundHttp } from '../../src/common/http/outbound-http';

/** A resolver that answers `addresses` for every name and records what it was asked. */
function resolver(...addresses: string[]): DnsLookup & { asked: string[] } {
  const asked: string[] = [];
  const lookup = ((hostname: string, _options: unknown, callback: (error: NodeJS.ErrnoException | null, a: LookupAddress[]) => void) => {
    asked.push(hostname);
    if (addresses.length === 0) {
      return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
    }
    callback(
      null,
      addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
    );
  }) as DnsLookup & { asked: string[] };
  lookup.asked = asked;
  return lookup;
}

const strict = { allowPrivate: false } as const;

describe('target policy (SSRF guard)', () => {
  describe('addresses, classified with ipaddr.js ranges', () => {
    it.each([
      ['127.0.0.1', 'loopback'],
      ['10.0.0.8', 'private'],
      ['172.20.1.1', 'private'],
      ['192.168.1.1', 'private'],
      ['169.254.169.254', 'link-local (cloud metadata)'],
      ['100.64.0.1', 'carrier-grade NAT'],
      ['0.0.0.0', 'unspecified'],
      ['255.255.255.255', 'broadcast'],
      ['224.0.0.1', 'multicast'],
      ['240.0.0.1', 'reserved'],
      ['192.0.2.10', 'documentation (reserved)'],
      ['198.18.0.1', 'benchmarking (reserved)'],
      ['192.175.48.1', 'as112'],
      ['192.52.193.1', 'amt'],
      ['::', 'unspecified'],
      ['::1', 'loopback'],
      ['fd00::1', 'unique local'],
      ['fe80::1', 'link-local'],
      ['fe80::1%eth0', 'link-local with a zone'],
      ['ff02::1', 'multicast'],
      ['2001:db8::1', 'documentation (reserved)'],
      ['2001:2::1', 'benchmarking'],
      ['2001:3::1', 'amt'],
      ['2001:4:112::1', 'as112v6'],
      ['2001:20::1', 'orchid2'],
      ['2001:30::1', 'drone remote id'],
      ['fec0::1', 'deprecated site-local'],
      ['100::1', 'discard'],
      ['5f00::1', 'segment routing'],
    ])('refuses %s (%s)', (address) => {
      expect(isCallableAddress(address)).toBe(false);
      expect(isPrivateAddress(address)).toBe(true);
    });

    it.each([
      ['::ffff:127.0.0.1', 'IPv4-mapped, dotted'],
      ['::ffff:7f00:1', 'IPv4-mapped, hex'],
      ['::ffff:a9fe:a9fe', 'IPv4-mapped metadata address'],
      ['::127.0.0.1', 'IPv4-compatible'],
      ['::7f00:1', 'IPv4-compatible, hex'],
      ['::a00:1', 'IPv4-compatible 10.0.0.1'],
      ['::ffff:0:7f00:1', 'IPv4-translated (RFC 6145)'],
      ['64:ff9b::7f00:1', 'NAT64 well-known prefix'],
      ['64:ff9b::a9fe:a9fe', 'NAT64 to the metadata address'],
      ['64:ff9b:1::7f00:1', 'local-use NAT64, /96 placement'],
      ['64:ff9b:1:7f00:0:100::', 'local-use NAT64, /48 placement'],
      ['64:ff9b:1:5db8:d8:2200::', 'local-use NAT64 whose /48 placement is public but /96 placement is 0.0.0.0'],
      ['2002:7f00:1::', '6to4 of 127.0.0.1'],
      ['2002:a00:1::1', '6to4 of 10.0.0.1'],
      ['2001:0:4136:e378:8000:63bf:80ff:fffe', 'Teredo, client 127.0.0.1 (XOR-obfuscated)'],
      ['2001:0:a00:1:8000:63bf:a247:27dd', 'Teredo, server 10.0.0.1'],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo, client 192.0.2.45'],
    ])('refuses %s (%s) by the IPv4 address it embeds', (address) => {
      expect(isCallableAddress(address)).toBe(false);
    });

    it.each([
      '93.184.216.34',
      '8.8.8.8',
      '2606:4700:4700::1111',
      '::ffff:5db8:d822',
      '::ffff:93.184.216.34',
      '64:ff9b::5db8:d822',
      '2002:5db8:d822::1',
      '2001:0:4136:e378:8000:63bf:a247:27dd',
    ])('accepts %s', (address) => {
      expect(isCallableAddress(address)).toBe(true);
      expect(isPrivateAddress(address)).toBe(false);
    });

    it('calls nothing that is not an address', () => {
      expect(isCallableAddress('example.com')).toBe(false);
      expect(isCallableAddress('')).toBe(false);
      expect(isPrivateAddress('example.com')).toBe(false);
    });
  });

  describe('URLs', () => {
    it.each([
      'https://[::ffff:127.0.0.1]/x',
      'https://[::127.0.0.1]/x',
      'https://[64:ff9b::7f00:1]/x',
      'https://[64:ff9b::127.0.0.1]/x',
      'https://[2002:7f00:1::]/x',
      'https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/x',
      'https://127.1/x',
      'https://0x7f000001/x',
      'https://2130706433/x',
      'https://[::1]:8443/x',
      'https://169.254.169.254/latest/meta-data/',
    ])('refuses %s without resolving anything', async (url) => {
      const lookup = resolver('93.184.216.34');
      await expect(assertCallableTarget(url, 'webhook_url', { ...strict, lookup })).rejects.toMatchObject({
        code: 'invalid_format',
        extras: { field: 'webhook_url' },
      });
      expect(lookup.asked).toEqual([]);
    });

    it.each([
      'https://localhost/x',
      'https://LOCALHOST/x',
      'https://localhost./x',
      'https://api.localhost/x',
      'https://metadata.internal/x',
      'https://metadata.google.internal./x',
      'https://printer.local/x',
    ])('refuses the local or internal name %s even when it resolves to a public address', async (url) => {
      const lookup = resolver('93.184.216.34');
      await expect(assertCallableTarget(url, 'runtimeUrl', { ...strict, lookup })).rejects.toMatchObject({
        code: 'invalid_format',
        detail: 'runtimeUrl must not point at a local or internal host',
      });
    });

    it('refuses http, with the scheme it got', async () => {
      await expect(assertCallableTarget('http://93.184.216.34/', 'webhook_url', strict)).rejects.toMatchObject({
        code: 'invalid_format',
        detail: 'webhook_url must use https (got http)',
      });
    });

    it.each(['https://u:p@93.184.216.34/', 'https://u@93.184.216.34/', 'https://:p@93.184.216.34/'])(
      'refuses credentials in the URL (%s), even a user name alone',
      async (url) => {
        await expect(assertCallableTarget(url, 'webhook_url', strict)).rejects.toMatchObject({
          code: 'invalid_format',
          detail: 'webhook_url must not carry credentials',
        });
      },
    );

    it('refuses text that is not an absolute URL', async () => {
      await expect(assertCallableTarget('/hooks', 'webhook_url', strict)).rejects.toMatchObject({
        detail: 'webhook_url must be an absolute URL with a scheme',
      });
    });

    it('accepts a public https address', async () => {
      await expect(assertCallableTarget('https://93.184.216.34/hooks', 'webhook_url', strict)).resolves.toBeInstanceOf(URL);
      await expect(assertCallableTarget('https://[2606:4700:4700::1111]/hooks', 'webhook_url', strict)).resolves.toBeInstanceOf(URL);
    });

    it('with private targets allowed, still requires https and no credentials but accepts loopback', async () => {
      const open = { allowPrivate: true };
      await expect(assertCallableTarget('https://127.0.0.1:8443/', 'runtimeUrl', open)).resolves.toBeInstanceOf(URL);
      await expect(assertCallableTarget('https://localhost/', 'runtimeUrl', open)).resolves.toBeInstanceOf(URL);
      await expect(assertCallableTarget('http://127.0.0.1/', 'runtimeUrl', open)).rejects.toMatchObject({ code: 'invalid_format' });
      await expect(assertCallableTarget('https://u@127.0.0.1/', 'runtimeUrl', open)).rejects.toMatchObject({ code: 'invalid_format' });
    });
  });

  describe('host names, through the resolver', () => {
    it('accepts a name whose every address is public, asking the injected resolver', async () => {
      const lookup = resolver('93.184.216.34', '2606:4700:4700::1111');
      await expect(assertCallableTarget('https://hooks.example.com/in', 'webhook_url', { ...strict, lookup })).resolves.toBeInstanceOf(URL);
      expect(lookup.asked).toEqual(['hooks.example.com']);
    });

    it('refuses a name when ANY of its addresses is not public, not only when all are', async () => {
      for (const answers of [
        ['93.184.216.34', '127.0.0.1'],
        ['10.0.0.1', '93.184.216.34'],
        ['2606:4700:4700::1111', '64:ff9b::7f00:1'],
      ]) {
        await expect(
          assertCallableTarget('https://hooks.example.com/in', 'webhook_url', { ...strict, lookup: resolver(...answers) }),
        ).rejects.toMatchObject({
          code: 'invalid_format',
          detail: 'webhook_url must not point at a loopback, private or link-local address',
        });
      }
    });

    it('refuses a name that does not resolve', async () => {
      await expect(
        assertCallableTarget('https://nowhere.example/in', 'webhook_url', { ...strict, lookup: resolver() }),
      ).rejects.toMatchObject({ detail: 'webhook_url has a host name that does not resolve' });
    });

    it('skips the resolver for a syntax-only check (resolve: false) and when private targets are allowed', async () => {
      const lookup = resolver('127.0.0.1');
      await expect(
        assertCallableTarget('https://hooks.example.com/', 'webhook_url', { ...strict, resolve: false, lookup }),
      ).resolves.toBeInstanceOf(URL);
      await expect(
        assertCallableTarget('https://hooks.example.com/', 'webhook_url', { allowPrivate: true, lookup }),
      ).resolves.toBeInstanceOf(URL);
      expect(lookup.asked).toEqual([]);
    });
  });

  describe('the checked lookup used at connect time', () => {
    const connect = (lookup: ReturnType<typeof checkedLookup>, all: boolean) =>
      new Promise<{ error: NodeJS.ErrnoException | null; result: unknown }>((resolve) =>
        lookup('runtime.example.com', { all, family: 0 }, (error: NodeJS.ErrnoException | null, address: unknown, family?: number) =>
          resolve({ error, result: all ? address : { address, family } }),
        ),
      );

    it('hands every public address to the socket', async () => {
      const answers = resolver('93.184.216.34', '2606:4700:4700::1111');
      expect(await connect(checkedLookup(answers, false), true)).toEqual({
        error: null,
        result: [
          { address: '93.184.216.34', family: 4 },
          { address: '2606:4700:4700::1111', family: 6 },
        ],
      });
      expect(await connect(checkedLookup(answers, false), false)).toEqual({
        error: null,
        result: { address: '93.184.216.34', family: 4 },
      });
    });

    it('fails the connection with EBLOCKEDTARGET when any address is not public', async () => {
      for (const answers of [['127.0.0.1'], ['93.184.216.34', '10.1.2.3'], ['2002:7f00:1::']]) {
        const { error } = await connect(checkedLookup(resolver(...answers), false), true);
        expect(error).toMatchObject({ code: 'EBLOCKEDTARGET' });
      }
    });

    it('lets private addresses through when private targets are allowed', async () => {
      expect(await connect(checkedLookup(resolver('127.0.0.1'), true), true)).toEqual({
        error: null,
        result: [{ address: '127.0.0.1', family: 4 }],
      });
    });

    it('passes resolver errors on', async () => {
      const { error } = await connect(checkedLookup(resolver(), false), true);
      expect(error).toMatchObject({ code: 'ENOTFOUND' });
    });
  });

  describe('the outbound client', () => {
    it.each([
      'https://[::127.0.0.1]:9/x',
      'https://[64:ff9b::7f00:1]:9/x',
      'https://[2002:7f00:1::]:9/x',
      'https://127.0.0.1:9/x',
      'https://localhost:9/x',
      'http://93.184.216.34/x',
      'https://u@93.184.216.34/x',
    ])('refuses %s before connecting or resolving anything', async (url) => {
      const lookup = resolver('93.184.216.34');
      const http = new OutboundHttp({ allowPrivateTargets: false }, lookup);
      await expect(http.fetch(url)).rejects.toMatchObject({ message: 'fetch failed', cause: { code: 'EBLOCKEDTARGET' } });
      expect(lookup.asked).toEqual([]);
    });

    it('asks its resolver when connecting and refuses a name that now answers a private address', async () => {
      const lookup = resolver('93.184.216.34', '10.0.0.7');
      const http = new OutboundHttp({ allowPrivateTargets: false }, lookup);
      try {
        await expect(http.fetch('https://runtime.example.com:9/x', { method: 'POST', body: '{}' })).rejects.toMatchObject({
          cause: { code: 'EBLOCKEDTARGET', message: 'runtime.example.com resolves to a loopback, private or link-local address' },
        });
        expect(lookup.asked).toEqual(['runtime.example.com']);
      } finally {
        http.onApplicationShutdown();
      }
    });

    it('rejects with the signal’s reason when aborted before the answer', async () => {
      const http = new OutboundHttp({ allowPrivateTargets: true });
      const aborted = AbortSignal.abort(new DOMException('late', 'TimeoutError'));
      await expect(http.fetch('https://127.0.0.1:9/x', { signal: aborted })).rejects.toMatchObject({ name: 'TimeoutError' });
    });
  });
});
