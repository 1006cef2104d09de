import { applyDecorators } from '@nestjs/common';
import { IsOptional, validate, ValidationError, ValidatorOptions } from 'class-validator';

const ACCEPTS_NULL = Symbol('acceptsNull');
/** The constraint name of a refused `null`; RequestValidationError renders it as a wrong value, not a missing one. */
export const NOT_NULL_CONSTRAINT = 'notNull';

/**
 * Marks a request field for which `null` is a value with a meaning of its own (for example `email: null`
 * in `PATCH /v1/contacts/:id`, which removes the address); its other validators are skipped for `null`.
 * Every other field refuses `null` (see `nullErrors`), whether it is required or optional.
 */
export const AcceptsNull = () =>
  applyDecorators(IsOptional(), (target: object, propertyKey: string | symbol) => {
    Reflect.defineMetadata(ACCEPTS_NULL, true, target, propertyKey);
  });

function acceptsNull(instance: object, property: string): boolean {
  return Reflect.getMetadata(ACCEPTS_NULL, instance, property) === true;
}

/** An instance of a request class (a DTO built by class-transformer), as opposed to free-form JSON inside it. */
function isRequestObject(value: unknown): value is object {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype !== null && prototype !== Object.prototype;
}

/**
 * The one null rule of the request DTOs: a field that is `null` is refused unless it is marked
 * `@AcceptsNull()`. `@IsOptional()` lets `null` through to the service (where it met NOT NULL columns and
 * `null.length`), so this runs after class-validator on the same instance, descending into nested request
 * classes (`@ValidateNested` + `@Type`) but not into free-form objects such as capability `params`.
 * Properties class-validator already refused are left to its message.
 */
export function nullErrors(instance: object, refused: ValidationError[] = []): ValidationError[] {
  const errors: ValidationError[] = [];
  const already = new Map(refused.map((e) => [e.property, e]));
  for (const [property, value] of Object.entries(instance)) {
    const existing = already.get(property);
    if (value === null) {
      if (existing || acceptsNull(instance, property)) continue;
      const error = new ValidationError();
      error.property = property;
      error.value = null;
      error.constraints = { [NOT_NULL_CONSTRAINT]: `${property} must not be null; leave the field out instead` };
      error.children = [];
      errors.push(error);
      continue;
    }
    if (existing?.constraints) continue;
    const children = Array.isArray(value)
      ? value.flatMap((item, index) => (isRequestObject(item) ? nested(String(index), item, existing?.children) : []))
      : isRequestObject(value)
        ? nullErrors(value, existing?.children)
        : [];
    if (children.length === 0) continue;
    if (existing) {
      existing.children = [...(existing.children ?? []), ...children];
      continue;
    }
    const error = new ValidationError();
    error.property = property;
    error.children = children;
    errors.push(error);
  }
  return errors;
}

function nested(property: string, item: object, refused: ValidationError[] | undefined): ValidationError[] {
  const existing = refused?.find((e) => e.property === property);
  if (existing?.constraints) return [];
  const children = nullErrors(item, existing?.children);
  if (children.length === 0) return [];
  if (existing) {
    existing.children = [...(existing.children ?? []), ...children];
    return [];
  }
  const error = new ValidationError();
  error.property = property;
  error.children = children;
  return [error];
}

/** class-validator followed by the null rule: what every request body and query goes through. */
export async function validateRequest(instance: object, options?: ValidatorOptions): Promise<ValidationError[]> {
  const errors = await validate(instance, options ?? {});
  return [...errors, ...nullErrors(instance, errors)];
}
