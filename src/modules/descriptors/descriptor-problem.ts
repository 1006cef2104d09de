import { DescriptorError } from '@soul-service/rules';
import { ProblemError } from '../../common/errors/problem-error';

/**
 * The service's answer to a descriptor the rules (@soul-service/rules) refuse:
 * the same code and detail, and the members (`field`, `schema_path`, `errors`)
 * in the order the rules give them, so the problem body is the one the CLI prints.
 */
export function toProblem(error: DescriptorError): ProblemError {
  return new ProblemError(error.code, error.detail, { ...error.members });
}

/** Runs a descriptor rule; a refusal comes out as the service's problem error, anything else unchanged. */
export function answeringAsProblem<T>(rule: () => T): T {
  try {
    return rule();
  } catch (error) {
    throw error instanceof DescriptorError ? toProblem(error) : error;
  }
}
