import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';
import { ProblemError } from '../errors/problem-error';

/** Address ranges a service must never be tricked into calling (SSRF). */
const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv6');
}

export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return false;
  // IPv4-mapped IPv6 (::ffff:a.b.c.d) reaches the IPv4 address: judge that one. (A BlockList rule for
  // ::ffff:0:0/96 would also match every plain IPv4 address, so it is handled here instead.)
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return PRIVATE.check(mapped[1], 'ipv4');
  const mappedHex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (mappedHex) {
    const [high, low] = [parseInt(mappedHex[1], 16), parseInt(mappedHex[2], 16)];
    return PRIVATE.check(`${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`, 'ipv4');
  }
  return PRIVATE.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

export interface TargetRules {
  /** `ALLOW_PRIVATE_TARGETS`: permit loopback and private ranges (tests, local development). */
  allowPrivate: boolean;
  /** Resolve host names and check every address (registration time); off for pure syntax checks. */
  resolve?: boolean;
}

/**
 * Checks a URL the service will call later (webhook endpoint, provider
 * runtime): HTTPS only, no credentials in it, and no loopback, private,
 * link-local or otherwise internal address, either literally or through DNS.
 * Throws `invalid_format` naming `field`.
 */
export async function assertCallableTarget(raw: string, field: string, rules: TargetRules): Promise<URL> {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ProblemError('invalid_format', `${field} must be an absolute URL with a scheme`, { field });
  }
  if (url.protocol !== 'https:')
    throw new ProblemError('invalid_format', `${field} must use https (got ${url.protocol.replace(':', '')})`, { field });
  if (url.username || url.password) throw new ProblemError('invalid_format', `${field} must not carry credentials`, { field });
  if (rules.allowPrivate) return url;

  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal') || host.endsWith('.local')) {
    throw new ProblemError('invalid_format', `${field} must not point at a local or internal host`, { field });
  }
  const addresses = isIP(host) ? [host] : rules.resolve === false ? [] : await resolveAll(host, field);
  if (addresses.some(isPrivateAddress)) {
    throw new ProblemError('invalid_format', `${field} must not point at a loopback, private or link-local address`, { field });
  }
  return url;
}

async function resolveAll(host: string, field: string): Promise<string[]> {
  try {
    return (await lookup(host, { all: true, verbatim: true })).map((entry) => entry.address);
  } catch {
    throw new ProblemError('invalid_format', `${field} has a host name that does not resolve`, { field });
  }
}
