import type { LookupAddress } from 'node:dns';
import ipaddr from 'ipaddr.js';
import {
  assertCallableTarget,
  assertCallableUrl,
  DnsLookup,
  embeddedIPv4,
  isCallableAddress,
  isPrivateAddress,
} from '../../src/common/http/target-policy';
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

    it('accepts a name that does not resolve: nothing to judge, and a call to it is a retryable failure, not a blocked one', async () => {
      const lookup = resolver();
      await expect(assertCallableTarget('https://nowhere.example/in', 'webhook_url', { ...strict, lookup })).resolves.toEqual(
        new URL('https://nowhere.example/in'),
      );
      expect(lookup.asked).toEqual(['nowhere.example']);
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

describe('target policy: the rules in detail', () => {
  /** A resolver the test scripts completely: error and answer, recording every name and option it is asked with. */
  function scripted(error: NodeJS.ErrnoException | null, answers: LookupAddress[]) {
    const calls: { hostname: string; options: unknown }[] = [];
    const lookup: DnsLookup = (hostname, options, callback) => {
      calls.push({ hostname, options });
      callback(error, answers);
    };
    return { lookup, calls };
  }
  const v4 = (address: string): LookupAddress => ({ address, family: 4 });
  const v6 = (address: string): LookupAddress => ({ address, family: 6 });
  const NON_PUBLIC = 'webhook_url must not point at a loopback, private or link-local address';

  describe('embeddedIPv4: every IPv4 address an IPv6 address embeds, at the RFC-defined bit positions', () => {
    const embedded = (address: string) => embeddedIPv4(ipaddr.IPv6.parse(address))?.map(String);

    it.each([
      ['::ffff:102:304', ['1.2.3.4'], 'IPv4-mapped (RFC 4291), low 32 bits'],
      ['::ffff:1.2.3.4', ['1.2.3.4'], 'IPv4-mapped, dotted'],
      ['::ffff:0:102:304', ['1.2.3.4'], 'IPv4-translated (RFC 6145), low 32 bits'],
      ['::102:304', ['1.2.3.4'], 'IPv4-compatible (RFC 4291), low 32 bits'],
      ['64:ff9b::102:304', ['1.2.3.4'], 'NAT64 well-known prefix /96 (RFC 6052)'],
      ['2002:102:304::1', ['1.2.3.4'], '6to4 (RFC 3056), bits 16–47'],
      ['2001:0:102:304:8000:63bf:faf9:f8f7', ['1.2.3.4', '5.6.7.8'], 'Teredo (RFC 4380): server bits 32–63, client XOR 0xffffffff'],
    ])('%s embeds %j (%s)', (address, expected) => {
      expect(embedded(address)).toEqual(expected);
    });

    it('reads a local-use NAT64 address (64:ff9b:1::/48, RFC 8215) at every prefix length RFC 6052 allows, skipping bits 64–71', () => {
      // bytes 6..15 are 01 02 03 04 05 06 07 08 09 0a; byte 8 (bits 64–71) is never part of the IPv4 address.
      expect(embedded('64:ff9b:1:102:304:506:708:90a')).toEqual(['1.2.4.5', '2.4.5.6', '4.5.6.7', '7.8.9.10']);
    });

    it.each(['2606:4700:4700::1111', '::1', '::', 'fe80::102:304', 'fd00::102:304', '2001:db8::102:304'])(
      '%s embeds no IPv4 address',
      (address) => {
        expect(embedded(address)).toBeUndefined();
      },
    );

    it.each([
      ['::102:304', true],
      ['::808:808', true],
      ['::ffff:0:808:808', true],
      ['::ffff:0:a00:1', false],
      ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', true],
      ['2001:0:4136:e378:8000:63bf:f5ff:fffe', false],
      ['64:ff9b:1:5db8:d822:5db8:d822:5db8', true],
      ['64:ff9b:1:5db8:d8:2200:a00:1', false],
      ['64:ff9b:1:a00:1:0:808:808', false],
      ['64:ff9b:1:808:8:808:808:808', true],
    ])('judges %s by every embedded address (callable: %s)', (address, callable) => {
      expect(isCallableAddress(address)).toBe(callable);
      expect(isPrivateAddress(address)).toBe(!callable);
    });
  });

  describe('RFC 6890 special-purpose IPv4 ranges, at their edges', () => {
    it.each([
      '0.255.255.255',
      '10.255.255.255',
      '100.64.0.0',
      '100.127.255.255',
      '127.255.255.254',
      '169.254.0.1',
      '172.16.0.0',
      '172.31.255.255',
      '192.0.0.8',
      '192.0.2.255',
      '192.88.99.1',
      '192.168.255.255',
      '198.18.0.0',
      '198.19.255.255',
      '198.51.100.7',
      '203.0.113.200',
      '224.0.0.0',
      '239.255.255.255',
      '240.0.0.0',
      '255.255.255.254',
    ])('refuses %s', (address) => {
      expect(isCallableAddress(address)).toBe(false);
    });

    it.each([
      '1.1.1.1',
      '9.255.255.255',
      '11.0.0.0',
      '100.63.255.255',
      '100.128.0.0',
      '172.15.255.255',
      '172.32.0.0',
      '192.167.255.255',
      '192.169.0.0',
      '198.17.255.255',
      '198.20.0.0',
      '223.255.255.254',
    ])('accepts %s, just outside a special range', (address) => {
      expect(isCallableAddress(address)).toBe(true);
    });

    it.each(['fc00::1', 'fdff:ffff::1', 'febf::1', 'ff00::', '::ffff:0.0.0.0', '2001:10::1'])('refuses the IPv6 address %s', (address) => {
      expect(isCallableAddress(address)).toBe(false);
    });

    it.each(['2a00:1450:4001::200e', 'fbff::1', 'fec0::1'.replace('fec0', '2c0f')])('accepts the public IPv6 address %s', (address) => {
      expect(isCallableAddress(address)).toBe(true);
    });
  });

  describe('assertCallableUrl (no DNS)', () => {
    const url = (raw: string) => new URL(raw);

    it('returns the host name still to be resolved, without brackets for an IPv6 literal', () => {
      expect(assertCallableUrl(url('https://Hooks.Example.com:8443/x?y#z'), 'f', false)).toBe('hooks.example.com');
      expect(assertCallableUrl(url('https://93.184.216.34/x'), 'f', false)).toBe('93.184.216.34');
      expect(assertCallableUrl(url('https://[2606:4700:4700::1111]/x'), 'f', false)).toBe('2606:4700:4700::1111');
    });

    it('returns undefined when private targets are allowed, after the scheme and credential checks', () => {
      expect(assertCallableUrl(url('https://10.0.0.1/x'), 'f', true)).toBeUndefined();
      expect(assertCallableUrl(url('https://[::1]/x'), 'f', true)).toBeUndefined();
      expect(() => assertCallableUrl(url('ftp://10.0.0.1/x'), 'f', true)).toThrow(
        expect.objectContaining({ code: 'invalid_format', detail: 'f must use https (got ftp)', extras: { field: 'f' } }),
      );
      expect(() => assertCallableUrl(url('https://:secret@10.0.0.1/x'), 'f', true)).toThrow(
        expect.objectContaining({ code: 'invalid_format', detail: 'f must not carry credentials', extras: { field: 'f' } }),
      );
    });

    it.each([
      'https://localhost.example.com/',
      'https://mylocalhost/',
      'https://internal.example.com/',
      'https://a.local.example.com/',
      'https://local/',
      'https://xlocal/',
      'https://api.localhostx/',
      'https://x.internals/',
    ])('does not mistake %s for a local name', (raw) => {
      expect(assertCallableUrl(url(raw), 'f', false)).toBe(new URL(raw).hostname);
    });

    it.each(['https://localhost../', 'https://a.b.internal../', 'https://x.LOCAL/'])('refuses the local name %s', (raw) => {
      expect(() => assertCallableUrl(url(raw), 'f', false)).toThrow(
        expect.objectContaining({ code: 'invalid_format', detail: 'f must not point at a local or internal host', extras: { field: 'f' } }),
      );
    });

    it('refuses a non-public literal with the address detail, naming the field', () => {
      expect(() => assertCallableUrl(url('https://[fd00::1]/'), 'runtimeUrl', false)).toThrow(
        expect.objectContaining({
          code: 'invalid_format',
          detail: 'runtimeUrl must not point at a loopback, private or link-local address',
          extras: { field: 'runtimeUrl' },
        }),
      );
    });

    it('refuses an https-like scheme that is not https', () => {
      for (const [raw, got] of [
        ['wss://93.184.216.34/', 'wss'],
        ['HTTP://93.184.216.34/', 'http'],
        ['httpss://93.184.216.34/', 'httpss'],
      ]) {
        expect(() => assertCallableUrl(url(raw), 'f', false)).toThrow(expect.objectContaining({ detail: `f must use https (got ${got})` }));
      }
    });
  });

  describe('assertCallableTarget and the resolver', () => {
    it('asks the resolver once, for every address (all: true), in the resolver’s order (verbatim)', async () => {
      const { lookup, calls } = scripted(null, [v4('93.184.216.34')]);
      await expect(assertCallableTarget('https://hooks.example.com./in', 'webhook_url', { ...strict, lookup })).resolves.toEqual(
        new URL('https://hooks.example.com./in'),
      );
      expect(calls).toEqual([{ hostname: 'hooks.example.com.', options: { all: true, verbatim: true } }]);
    });

    it('resolves when resolve is true, as when it is left out', async () => {
      const { lookup, calls } = scripted(null, [v4('10.0.0.1')]);
      await expect(
        assertCallableTarget('https://hooks.example.com/', 'webhook_url', { ...strict, resolve: true, lookup }),
      ).rejects.toMatchObject({
        code: 'invalid_format',
        detail: NON_PUBLIC,
        extras: { field: 'webhook_url' },
      });
      expect(calls).toHaveLength(1);
    });

    it('does not ask the resolver about a public literal address', async () => {
      const { lookup, calls } = scripted(null, [v4('10.0.0.1')]);
      await expect(assertCallableTarget('https://93.184.216.34/', 'webhook_url', { ...strict, lookup })).resolves.toBeInstanceOf(URL);
      await expect(assertCallableTarget('https://[2606:4700:4700::1111]/', 'webhook_url', { ...strict, lookup })).resolves.toBeInstanceOf(
        URL,
      );
      expect(calls).toEqual([]);
    });

    it('refuses a name whose only address is private, or whose IPv6 answer embeds a private IPv4', async () => {
      for (const answers of [
        [v4('127.0.0.1')],
        [v6('::ffff:7f00:1')],
        [v6('fe80::1')],
        [v4('8.8.8.8'), v6('2606:4700::1'), v4('169.254.169.254')],
      ]) {
        const { lookup } = scripted(null, answers);
        await expect(assertCallableTarget('https://hooks.example.com/', 'webhook_url', { ...strict, lookup })).rejects.toMatchObject({
          code: 'invalid_format',
          detail: NON_PUBLIC,
          extras: { field: 'webhook_url' },
        });
      }
    });

    it('accepts a name when the resolver fails without addresses (NXDOMAIN, SERVFAIL)', async () => {
      for (const code of ['ENOTFOUND', 'ESERVFAIL', 'EAI_AGAIN']) {
        const { lookup, calls } = scripted(Object.assign(new Error(`queryA ${code}`), { code }), []);
        await expect(assertCallableTarget('https://hooks.example.com/', 'webhook_url', { ...strict, lookup })).resolves.toEqual(
          new URL('https://hooks.example.com/'),
        );
        expect(calls).toHaveLength(1);
      }
    });

    it('judges the addresses a failing resolver still hands back: public ones pass, a private one refuses', async () => {
      const failure = Object.assign(new Error('queryA ESERVFAIL'), { code: 'ESERVFAIL' });
      const publicAnswer = scripted(failure, [v4('93.184.216.34')]);
      await expect(
        assertCallableTarget('https://hooks.example.com/', 'webhook_url', { ...strict, lookup: publicAnswer.lookup }),
      ).resolves.toBeInstanceOf(URL);
      const privateAnswer = scripted(failure, [v4('93.184.216.34'), v4('10.1.2.3')]);
      await expect(
        assertCallableTarget('https://hooks.example.com/', 'webhook_url', { ...strict, lookup: privateAnswer.lookup }),
      ).rejects.toMatchObject({ code: 'invalid_format', detail: NON_PUBLIC, extras: { field: 'webhook_url' } });
    });

    it('accepts a name the resolver answers with no address and no error', async () => {
      const { lookup } = scripted(null, []);
      await expect(assertCallableTarget('https://hooks.example.com/', 'webhook_url', { ...strict, lookup })).resolves.toBeInstanceOf(URL);
    });

    it('accepts a name the resolver answers with no address list at all, and fails the connection to it with ENOTFOUND', async () => {
      const lookup: DnsLookup = (_hostname, _options, callback) => callback(null, undefined as unknown as LookupAddress[]);
      await expect(assertCallableTarget('https://hooks.example.com/', 'webhook_url', { ...strict, lookup })).resolves.toBeInstanceOf(URL);
      const [error] = await new Promise<unknown[]>((resolve) =>
        (checkedLookup(lookup, false) as unknown as (h: string, o: object, cb: (...args: unknown[]) => void) => void)(
          'runtime.example.com',
          { all: true },
          (...args) => resolve(args),
        ),
      );
      expect(error).toMatchObject({ code: 'ENOTFOUND', message: 'no address for runtime.example.com' });
    });

    it('connects nowhere for a name that does not resolve: the connection fails with the resolver’s error, not as blocked', async () => {
      const failure = Object.assign(new Error('getaddrinfo ENOTFOUND runtime.example.com'), { code: 'ENOTFOUND' });
      const { lookup } = scripted(failure, []);
      const http = new OutboundHttp({ allowPrivateTargets: false }, lookup);
      await expect(http.assertCallable('https://runtime.example.com/x', 'runtimeUrl')).resolves.toBeInstanceOf(URL);
      await expect(http.fetch('https://runtime.example.com/x')).rejects.toMatchObject({ cause: { code: 'ENOTFOUND' } });
      http.onApplicationShutdown();
    });

    it('refuses unparsable text naming the field', async () => {
      await expect(assertCallableTarget('not a url', 'runtimeUrl', strict)).rejects.toMatchObject({
        code: 'invalid_format',
        detail: 'runtimeUrl must be an absolute URL with a scheme',
        extras: { field: 'runtimeUrl' },
      });
    });

    it('with ALLOW_PRIVATE_TARGETS, accepts private literals and names without resolving, but still refuses http and credentials', async () => {
      const { lookup, calls } = scripted(null, [v4('10.0.0.1')]);
      const open = { allowPrivate: true, lookup };
      for (const raw of [
        'https://10.0.0.1/',
        'https://[fd00::1]/',
        'https://[::ffff:7f00:1]/',
        'https://metadata.internal/',
        'https://hooks.example.com/',
      ]) {
        await expect(assertCallableTarget(raw, 'runtimeUrl', open)).resolves.toEqual(new URL(raw));
      }
      expect(calls).toEqual([]);
      await expect(assertCallableTarget('http://hooks.example.com/', 'runtimeUrl', open)).rejects.toMatchObject({
        detail: 'runtimeUrl must use https (got http)',
      });
      await expect(assertCallableTarget('https://user@hooks.example.com/', 'runtimeUrl', open)).rejects.toMatchObject({
        detail: 'runtimeUrl must not carry credentials',
      });
      await expect(assertCallableTarget('https://:pw@hooks.example.com/', 'runtimeUrl', open)).rejects.toMatchObject({
        detail: 'runtimeUrl must not carry credentials',
      });
    });
  });

  describe('checkedLookup (connect time)', () => {
    type Options = { all?: boolean; family?: number | 'IPv4' | 'IPv6'; hints?: number };
    const run = (lookup: ReturnType<typeof checkedLookup>, options: Options) =>
      new Promise<unknown[]>((resolve) =>
        (lookup as unknown as (h: string, o: Options, cb: (...args: unknown[]) => void) => void)(
          'runtime.example.com',
          options,
          (...args) => resolve(args),
        ),
      );

    it.each([
      [{ family: 4 }, 4],
      [{ family: 6 }, 6],
      [{ family: 0 }, 0],
      [{ family: 'IPv4' as const }, 4],
      [{ family: 'IPv6' as const }, 6],
      [{}, 0],
    ])('asks the resolver for every address of the requested family (%j → %d), passing the hints on', async (options, family) => {
      const { lookup, calls } = scripted(null, [v4('93.184.216.34')]);
      await run(checkedLookup(lookup, false), { ...options, hints: 1024 });
      expect(calls).toEqual([{ hostname: 'runtime.example.com', options: { all: true, family, hints: 1024 } }]);
    });

    it('with all: true hands every address to the socket; otherwise the first one with its family', async () => {
      const answers = [v6('2606:4700:4700::1111'), v4('93.184.216.34')];
      expect(await run(checkedLookup(scripted(null, answers).lookup, false), { all: true })).toEqual([null, answers]);
      expect(await run(checkedLookup(scripted(null, answers).lookup, false), {})).toEqual([null, '2606:4700:4700::1111', 6]);
      expect(await run(checkedLookup(scripted(null, answers).lookup, false), { all: false })).toEqual([null, '2606:4700:4700::1111', 6]);
    });

    it('fails with EBLOCKEDTARGET when any answer is not public, whatever its position, single answer or all', async () => {
      for (const answers of [
        [v4('93.184.216.34'), v6('fd00::1')],
        [v6('::ffff:a9fe:a9fe'), v4('93.184.216.34')],
      ]) {
        for (const all of [true, false]) {
          const [error, address, family] = await run(checkedLookup(scripted(null, answers).lookup, false), { all });
          expect(error).toBeInstanceOf(Error);
          expect(error).toMatchObject({
            code: 'EBLOCKEDTARGET',
            message: 'runtime.example.com resolves to a loopback, private or link-local address',
          });
          expect([address, family]).toEqual(['', 4]);
        }
      }
    });

    it('with private targets allowed, hands a mixed answer on unchanged', async () => {
      const answers = [v4('10.0.0.1'), v4('93.184.216.34')];
      expect(await run(checkedLookup(scripted(null, answers).lookup, true), { all: true })).toEqual([null, answers]);
      expect(await run(checkedLookup(scripted(null, answers).lookup, true), {})).toEqual([null, '10.0.0.1', 4]);
    });

    it('passes the resolver’s own error through unchanged, even when addresses come with it', async () => {
      const failure = Object.assign(new Error('getaddrinfo EAI_AGAIN runtime.example.com'), { code: 'EAI_AGAIN' });
      const [error, address, family] = await run(checkedLookup(scripted(failure, [v4('93.184.216.34')]).lookup, false), { all: true });
      expect(error).toBe(failure);
      expect([address, family]).toEqual(['', 4]);
    });

    it('fails with ENOTFOUND when the resolver answers nothing without an error, even with private targets allowed', async () => {
      for (const allowPrivate of [false, true]) {
        const [error, address, family] = await run(checkedLookup(scripted(null, []).lookup, allowPrivate), { all: true });
        expect(error).toBeInstanceOf(Error);
        expect(error).toMatchObject({ code: 'ENOTFOUND', message: 'no address for runtime.example.com' });
        expect([address, family]).toEqual(['', 4]);
      }
    });
  });
});
