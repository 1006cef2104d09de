import { ValidationError } from 'class-validator';
import { NOT_NULL_CONSTRAINT } from '../validation/null-rule';

export interface FieldIssue {
  /** Dotted path of the offending field, for example `params.to` or `members[1]`. */
  field: string;
  /** True when the field was absent rather than present with a wrong value. */
  missing: boolean;
  /** Human-readable description naming the field. */
  message: string;
}

/**
 * Thrown by the global ValidationPipe. Neutral about envelopes: the error filter
 * renders it as `BAD_REQUEST` for the user API and as `missing_field` /
 * `invalid_format` problems for the provider platform.
 */
export class RequestValidationError extends Error {
  constructor(readonly issues: FieldIssue[]) {
    super(issues.map((i) => i.message).join('; '));
    this.name = 'RequestValidationError';
  }

  static fromClassValidator(errors: ValidationError[]): RequestValidationError {
    const issues: FieldIssue[] = [];
    const walk = (list: ValidationError[], parent: string) => {
      for (const error of list) {
        const field =
          parent === '' ? error.property : /^\d+$/.test(error.property) ? `${parent}[${error.property}]` : `${parent}.${error.property}`;
        if (error.constraints) {
          // A refused null (the null rule) is a wrong value, not an absent field.
          const missing = (error.value === undefined || error.value === null) && !error.constraints[NOT_NULL_CONSTRAINT];
          const constraint = error.constraints.whitelistValidation
            ? `${field} is not a known field`
            : missing
              ? `${field} is required`
              : Object.values(error.constraints)[0].replace(error.property, field);
          issues.push({ field, missing: missing && !error.constraints.whitelistValidation, message: constraint });
        }
        if (error.children?.length) walk(error.children, field);
      }
    };
    walk(errors, '');
    return new RequestValidationError(issues.length > 0 ? issues : [{ field: '', missing: false, message: 'request is invalid' }]);
  }
}
