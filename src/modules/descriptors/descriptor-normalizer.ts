import * as rules from '@soul-service/rules';
import { answeringAsProblem } from './descriptor-problem';

/**
 * Capability descriptors (full or short form) normalised to the stored form by
 * the rules of @soul-service/rules; a refused one is thrown as the service's
 * `ProblemError` naming the offending field.
 */
export function normaliseCapabilities(raw: unknown): rules.CapabilityDescriptor[] {
  return answeringAsProblem(() => rules.normaliseCapabilities(raw));
}
