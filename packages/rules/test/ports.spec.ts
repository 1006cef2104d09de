import { BLOCKED_TARGET, LIVEMODE_HEADER, randomId, REQUEST_ID_HEADER, runtimeCallHeaders } from '@soul-service/rules';
import { BLOCKED_TARGET as SERVICE_BLOCKED_TARGET } from '../../../src/common/http/outbound-http';
import { isId } from '../../../src/common/ids';
import * as service from '../../../src/modules/access/runtime-tokens';

/**
 * The ports speak the service's protocol: the rules keep their own copies of a
 * few wire constants (the package may not import the service), so a change on
 * either side fails here instead of in a provider's runtime.
 */
describe('the conformance ports and the service agree', () => {
  it('on the error code of a refused connection', () => {
    expect(BLOCKED_TARGET).toBe(SERVICE_BLOCKED_TARGET);
  });

  it('on the headers every runtime call carries', () => {
    expect(REQUEST_ID_HEADER).toBe(service.REQUEST_ID_HEADER);
    expect(LIVEMODE_HEADER).toBe(service.LIVEMODE_HEADER);
    expect(runtimeCallHeaders('tok', 'req_1', false)).toEqual(service.runtimeCallHeaders('tok', 'req_1', false));
    expect(runtimeCallHeaders('tok', 'req_1', true)).toEqual(service.runtimeCallHeaders('tok', 'req_1', true));
  });

  it('on the shape of ids the suite makes up', () => {
    for (const prefix of ['req', 'idem', 'app', 'evt'] as const) {
      const id = randomId(prefix);
      expect(isId(id, prefix)).toBe(true);
    }
    expect(randomId('req')).not.toBe(randomId('req'));
  });
});
