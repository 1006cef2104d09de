import { CapabilityDescriptor } from '../descriptors/capability-descriptor';
import { CheckOutcome, deferred } from './conformance-report';
import { isExecutable } from './runtime-answers';

/** Weights of the live contract checks, shared with a quick validation's placeholders for them. */
export const LIVE_CONTRACT_WEIGHTS = { execute: 10, response_schema: 4, history_pagination: 2, realtime_stream: 2 } as const;

/**
 * A quick validation's stand-ins for the live contract checks, applicable
 * exactly when the full run's checks would be, so a static contract check
 * shows the same maximum in a quick and a full run.
 */
export function deferredLiveContracts(capabilities: CapabilityDescriptor[]): CheckOutcome[] {
  const executables = capabilities.filter(isExecutable);
  return [
    deferred('contracts.execute', LIVE_CONTRACT_WEIGHTS.execute, executables.length > 0),
    deferred(
      'contracts.response_schema',
      LIVE_CONTRACT_WEIGHTS.response_schema,
      executables.some((c) => c.responseSchema !== undefined),
    ),
    deferred(
      'contracts.history_pagination',
      LIVE_CONTRACT_WEIGHTS.history_pagination,
      capabilities.some((c) => c.type === 'history'),
    ),
    deferred(
      'contracts.realtime_stream',
      LIVE_CONTRACT_WEIGHTS.realtime_stream,
      capabilities.some((c) => c.type === 'realtime'),
    ),
  ];
}
