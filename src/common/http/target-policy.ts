import { lookup as systemLookup, LookupAddress } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { ProblemError } from '../errors/problem-error';

/**
 * The resolver the service asks for host names it will call: `dns.lookup`
 * (getaddrinfo, the same answer a socket would get) unless a test injects
 * another one (see `DNS_LOOKUP` in outbound-http.ts). Always asked for every address.
 */
export type DnsLookup = (
  hostname: string,
  options: { all: true; family?: number; hints?: number; verbatim?: boolean },
  callback: (error: NodeJS.ErrnoException | null, addresses: LookupAddress[]) => void,
) => void;

export const defaultLookup: DnsLookup = (hostname, options, callback) => systemLookup(hostname, options, callback);

/** The one range name ipaddr.js gives a publicly routable address; every other one (loopback, private, reserved…) is not callable. */
const PUBLIC_RANGE = 'unicast';
/** IPv4-compatible addresses (RFC 4291, deprecated): `::a.b.c.d`. ipaddr.js has no range name for them. */
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');
/** The local-use NAT64 prefix (RFC 8215); the well-known one, 64:ff9b::/96, is the rest of ipaddr.js's `rfc6052` range. */
const NAT64_LOCAL_USE = ipaddr.IPv6.parseCIDR('64:ff9b:1::/48');

const octets = (parts: number[], byteOffsets: number[]) =>
  new ipaddr.IPv4(byteOffsets.map((at) => (at % 2 === 0 ? parts[at / 2] >> 8 : parts[(at - 1) / 2] & 0xff)));

/**
 * The IPv4 addresses a packet to this IPv6 address may be delivered to, for
 * the forms that embed one: IPv4-mapped and IPv4-compatible (RFC 4291),
 * IPv4-translated (RFC 6145), NAT64 (RFC 6052/8215), 6to4 (RFC 3056) and
 * Teredo (RFC 4380: the server in bits 32–63, the client in the last 32 bits
 * XOR 0xffffffff). `undefined` when the address embeds none.
 */
export function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] | undefined {
  const p = address.parts;
  switch (address.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [octets(p, [12, 13, 14, 15])];
    case 'rfc6052':
      if (!address.match(NAT64_LOCAL_USE)) return [octets(p, [12, 13, 14, 15])];
      // A local-use prefix may be /48, /56, /64 or /96 (RFC 6052 §2.2, bits 64–71 skipped): which one the
      // operator's translator uses is unknown here, so every placement must read a public address.
      return [octets(p, [6, 7, 9, 10]), octets(p, [7, 9, 10, 11]), octets(p, [9, 10, 11, 12]), octets(p, [12, 13, 14, 15])];
    case '6to4':
      return [octets(p, [2, 3, 4, 5])];
    case 'teredo': {
      const client = octets(p, [12, 13, 14, 15]).octets.map((o) => o ^ 0xff);
      return [octets(p, [4, 5, 6, 7]), new ipaddr.IPv4(client)];
    }
    default:
      // `::` and `::1` have their own ranges (unspecified, loopback); the rest of ::/96 carries an IPv4 address.
      return address.range() === PUBLIC_RANGE && address.match(IPV4_COMPATIBLE) ? [octets(p, [12, 13, 14, 15])] : undefined;
  }
}

/**
 * True only for a publicly routable unicast address: IPv4 in ipaddr.js's
 * `unicast` range, IPv6 in its `unicast` range, and an IPv6 address that
 * embeds IPv4 addresses only when every one of them is public. Anything that
 * is not an IP address is not callable.
 */
export function isCallableAddress(address: string): boolean {
  if (isIP(address) === 0) return false;
  const parsed = ipaddr.parse(address);
  if (parsed instanceof ipaddr.IPv4) return parsed.range() === PUBLIC_RANGE;
  const embedded = embeddedIPv4(parsed);
  if (embedded) return embedded.every((v4) => v4.range() === PUBLIC_RANGE);
  return parsed.range() === PUBLIC_RANGE;
}

/** An IP address the service must never be tricked into calling (SSRF): loopback, private, link-local, reserved… */
export function isPrivateAddress(address: string): boolean {
  return isIP(address) !== 0 && !isCallableAddress(address);
}

/** Names that only mean something inside a network, refused whatever they resolve to. A trailing dot is the same name. */
function isLocalName(host: string): boolean {
  const name = host.replace(/\.+$/, '');
  return name === 'localhost' || /\.(localhost|internal|local)$/.test(name);
}

export interface TargetRules {
  /** `ALLOW_PRIVATE_TARGETS`: permit loopback and private ranges (tests, local development). */
  allowPrivate: boolean;
  /** Resolve host names and check every address (registration time); off for pure syntax checks. */
  resolve?: boolean;
  /** The resolver to ask; `dns.lookup` by default. */
  lookup?: DnsLookup;
}

/**
 * Checks a URL the service will call later (webhook endpoint, provider
 * runtime): HTTPS only, no credentials in it, and no loopback, private,
 * link-local or otherwise non-public address, either literally, embedded in
 * an IPv6 address, or through DNS (any one non-public answer refuses the name).
 * Throws `invalid_format` naming `field`. A name that does not resolve is not
 * refused: it points nowhere (yet), so there is nothing to judge, and a call
 * to it is a retryable failure, not a blocked one. The address is checked
 * again when the connection is made (outbound-http.ts), since DNS may change in between.
 */
export async function assertCallableTarget(raw: string, field: string, rules: TargetRules): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ProblemError('invalid_format', `${field} must be an absolute URL with a scheme`, { field });
  }
  const host = assertCallableUrl(url, field, rules.allowPrivate);
  if (host === undefined || isIP(host) || rules.resolve === false) return url;
  const addresses = await resolveAll(host, rules.lookup ?? defaultLookup);
  if (!addresses.every(isCallableAddress)) throw nonPublic(field);
  return url;
}

/**
 * The part of the check that needs no DNS: scheme, credentials, local names
 * and literal addresses (a socket never asks the resolver about those, so the
 * connect-time lookup cannot catch them). Returns the host name still to be
 * resolved, or `undefined` when private targets are allowed.
 */
export function assertCallableUrl(url: URL, field: string, allowPrivate: boolean): string | undefined {
  if (url.protocol !== 'https:')
    throw new ProblemError('invalid_format', `${field} must use https (got ${url.protocol.replace(':', '')})`, { field });
  if (url.username || url.password) throw new ProblemError('invalid_format', `${field} must not carry credentials`, { field });
  if (allowPrivate) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (isLocalName(host)) {
    throw new ProblemError('invalid_format', `${field} must not point at a local or internal host`, { field });
  }
  if (isIP(host) && !isCallableAddress(host)) throw nonPublic(field);
  return host;
}

const nonPublic = (field: string) =>
  new ProblemError('invalid_format', `${field} must not point at a loopback, private or link-local address`, { field });

/**
 * Every address the resolver hands back for `host`, also alongside an error
 * (those are judged too); none when the name does not resolve (NXDOMAIN,
 * SERVFAIL, an empty answer).
 */
function resolveAll(host: string, lookup: DnsLookup): Promise<string[]> {
  return new Promise((resolve) =>
    lookup(host, { all: true, verbatim: true }, (_error, addresses) => resolve((addresses ?? []).map((a) => a.address))),
  );
}
