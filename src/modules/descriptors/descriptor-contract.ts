import * as rules from '@soul-service/rules';
import { answeringAsProblem } from './descriptor-problem';

/**
 * The descriptor contract as the service applies it: the rules of
 * @soul-service/rules (descriptors/descriptor-contract.ts there), refusals
 * thrown as the service's `ProblemError` with every fault in `errors`.
 */

/** Throws one problem listing every fault; nothing when there is none. */
export function refuseErrors(errors: rules.DescriptorFault[]): void {
  answeringAsProblem(() => rules.refuseErrors(errors));
}

/** Checks a request body against the contract and throws a problem listing every fault. */
export function assertDescriptorRequest(kind: rules.DescriptorRequest, body: unknown): void {
  answeringAsProblem(() => rules.assertDescriptorRequest(kind, body));
}
