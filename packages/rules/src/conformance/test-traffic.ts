import { decodeJwt, decodeProtectedHeader, generateKeyPair, KeyLike, SignJWT } from 'jose';
import { randomId } from '../ids';
import { LIVEMODE_HEADER, REQUEST_ID_HEADER, RuntimeCall, runtimeCallHeaders, RuntimeTokenPort } from './ports';

/** The tokens the security check presents, each of which a runtime must refuse with 401. */
export type RefusedToken = 'none' | 'expired' | 'forged' | 'other_app';

export const REFUSED_TOKENS: ReadonlyArray<{ kind: RefusedToken; label: string }> = [
  { kind: 'none', label: 'no Authorization' },
  { kind: 'expired', label: 'an expired token' },
  { kind: 'forged', label: 'a token signed by another key' },
  { kind: 'other_app', label: 'a token for another app' },
];

/** How far back the expired probe is issued: well past its lifetime and any sensible clock tolerance. */
const EXPIRED_BY_MS = 60 * 60 * 1000;

let forgingKey: Promise<KeyLike> | undefined;

/** `inst_test…`, `usr_test…`: a synthetic id of the id format, never one of a real row. */
function testId(prefix: 'usr' | 'inst'): string {
  return `${prefix}_test${randomId(prefix).slice(prefix.length + 5)}`;
}

/**
 * The credentials of one conformance run: test traffic (`livemode: false`) for
 * a synthetic install and user (`inst_test_…`, `usr_test_…`) of the app under
 * test, with the same kind of runtime token as live calls, one per request.
 * Every token handed out is remembered, so the credential scan finds any of
 * them echoed back.
 */
export class TestTraffic {
  /** Shaped like real ids (22 characters after the prefix), recognisable by the `test` they start with. */
  readonly userId = testId('usr');
  readonly installId = testId('inst');
  /** Every token sent during the run (valid ones and probes). */
  readonly sent: string[] = [];

  constructor(
    private readonly tokens: RuntimeTokenPort,
    /** The app under test: the audience of the run's tokens. */
    readonly appId: string,
  ) {}

  private call(requestId: string, appId = this.appId): RuntimeCall {
    return { appId, userId: this.userId, installId: this.installId, requestId, scopes: [], livemode: false };
  }

  /** `Authorization`, `X-Service-Request-Id` and `X-Service-Livemode: false` for one call of the run. */
  async headers(requestId: string = randomId('req')): Promise<Record<string, string>> {
    return runtimeCallHeaders(this.remember(await this.tokens.mint(this.call(requestId))), requestId, false);
  }

  /** The headers of a call the runtime must refuse: no token, or one that is expired, forged or for another app. */
  async refusedHeaders(kind: RefusedToken, requestId: string = randomId('req')): Promise<Record<string, string>> {
    if (kind === 'none') return { [REQUEST_ID_HEADER]: requestId, [LIVEMODE_HEADER]: 'false' };
    let token: string;
    if (kind === 'expired') {
      token = await this.tokens.mint(this.call(requestId), { issuedAt: new Date(Date.now() - EXPIRED_BY_MS) });
    } else if (kind === 'other_app') {
      token = await this.tokens.mint(this.call(requestId, randomId('app')));
    } else {
      // Exactly the claims and header (kid included) of a valid token, signed by a key the service never published.
      const genuine = await this.tokens.mint(this.call(requestId));
      forgingKey ??= generateKeyPair('ES256').then((pair) => pair.privateKey);
      const { alg, kid, typ } = decodeProtectedHeader(genuine);
      token = await new SignJWT(decodeJwt(genuine)).setProtectedHeader({ alg: alg ?? 'ES256', kid, typ }).sign(await forgingKey);
    }
    return runtimeCallHeaders(this.remember(token), requestId, false);
  }

  private remember(token: string): string {
    this.sent.push(token);
    return token;
  }
}
