import { isIP } from 'node:net';
import { Global, Module, Type } from '@nestjs/common';
import { DNS_LOOKUP } from '../../src/common/http/outbound-http';
import type { DnsLookup } from '../../src/common/http/target-policy';

/** A public address (example.com's) the scripted resolver answers when a check should pass. */
export const PUBLIC_ADDRESS = '93.184.216.34';

/**
 * A resolver whose answers the test scripts: `answer(host, a, b)` answers `a`
 * to the next lookup of `host` and `b` to every later one (a DNS rebinding
 * attacker's name). Names it was not told about do not resolve.
 */
export class ScriptedDns {
  readonly asked: string[] = [];
  private readonly answers = new Map<string, string[]>();

  answer(host: string, ...addresses: string[]): void {
    this.answers.set(host, addresses);
  }

  readonly lookup: DnsLookup = (hostname, _options, callback) => {
    this.asked.push(hostname);
    const queue = this.answers.get(hostname);
    setImmediate(() => {
      if (!queue?.length) return callback(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' }), []);
      const address = queue.length > 1 ? queue.shift()! : queue[0];
      callback(null, [{ address, family: isIP(address) }]);
    });
  };

  /** A module that replaces the service's resolver (`DNS_LOOKUP`) with this one, for registration checks and every outbound connection alike. */
  module(): Type {
    @Global()
    @Module({ providers: [{ provide: DNS_LOOKUP, useValue: this.lookup }], exports: [DNS_LOOKUP] })
    class ScriptedDnsModule {}
    return ScriptedDnsModule;
  }
}
