import { Injectable } from '@nestjs/common';
import { ConformanceInput, ConformanceReport, DimensionKey, runConformance, Verdict } from '@soul-service/rules';
import { OutboundHttp } from '../../common/http/outbound-http';
import { RuntimeTokens } from '../access/runtime-tokens';

export type { ConformanceInput, ConformanceReport, DimensionKey, Verdict };

/**
 * The conformance suite of @soul-service/rules (`runConformance`, docs/conformance.md)
 * run by the service: its outbound client as the HTTP port, so every connection's
 * address is checked against ALLOW_PRIVATE_TARGETS, and its runtime tokens as the
 * token port, so the runtime sees the tokens live traffic carries.
 */
@Injectable()
export class ConformanceRunner {
  constructor(
    private readonly http: OutboundHttp,
    private readonly tokens: RuntimeTokens,
  ) {}

  run(input: ConformanceInput): Promise<Verdict> {
    return runConformance(input, { http: this.http, tokens: this.tokens });
  }
}
