import { CAPABILITY_MODES as SERVER_CAPABILITY_MODES, RISK_TIERS as SERVER_RISK_TIERS } from '@soul-service/rules';
import {
  CAPABILITY_MODES,
  isKnownEventType,
  PING_EVENT_TYPE,
  REMOVAL_REASONS,
  RISK_TIERS,
  WEBHOOK_EVENT_FIELDS,
  WEBHOOK_EVENT_TYPES,
} from '@soul-service/webhooks';
import { REMOVAL_REASONS as SERVER_REMOVAL_REASONS } from '../../../src/modules/marketplace/installs.service';
import { PING_EVENT } from '../../../src/modules/webhooks/endpoint-check';
import { sampleData } from '../../../src/modules/webhooks/sample-events';
import { WEBHOOK_EVENT_TYPES as SERVER_EVENT_TYPES } from '../../../src/modules/webhooks/webhook-contract';

/**
 * Drift between the package's types and the server's events: a server event
 * type, or a field of one, without its type in the package fails here.
 */
describe('event types', () => {
  it('lists exactly the event types the server delivers (webhook-contract.ts)', () => {
    expect([...WEBHOOK_EVENT_TYPES].sort()).toEqual([...SERVER_EVENT_TYPES].sort());
  });

  it('has the ping type the endpoint check sends', () => {
    expect(PING_EVENT_TYPE).toBe(PING_EVENT);
    expect(isKnownEventType(PING_EVENT)).toBe(true);
  });

  it.each([...SERVER_EVENT_TYPES])('types every data field of %s, as the server’s sample event has them', (type) => {
    expect(isKnownEventType(type)).toBe(true);
    expect([...WEBHOOK_EVENT_FIELDS[type]].sort()).toEqual(Object.keys(sampleData(type, 'app_test00000000000000000')).sort());
  });

  it('does not claim to know a type the server never sends', () => {
    expect(isKnownEventType('install.updated')).toBe(false);
    expect(isKnownEventType('toString')).toBe(false);
  });
});

/** The closed value sets the typed fields use, against the server's own lists. */
describe('value sets', () => {
  it('knows every install removal reason', () => {
    expect([...REMOVAL_REASONS].sort()).toEqual([...SERVER_REMOVAL_REASONS].sort());
  });

  it('knows every risk tier and capability mode', () => {
    expect([...RISK_TIERS].sort()).toEqual([...SERVER_RISK_TIERS].sort());
    expect([...CAPABILITY_MODES].sort()).toEqual([...SERVER_CAPABILITY_MODES].sort());
  });
});
