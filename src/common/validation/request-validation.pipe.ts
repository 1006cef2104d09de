import { ValidationPipe } from '@nestjs/common';
import type { ValidationError, ValidatorOptions } from 'class-validator';
import { RequestValidationError } from '../errors/request-validation.error';
import { validateRequest } from './null-rule';

/**
 * The global pipe of every body, query and parameter DTO: class-validator with unknown fields refused,
 * then the null rule (`validateRequest`), failures rendered by the error filter in the path's envelope.
 */
export class RequestValidationPipe extends ValidationPipe {
  constructor() {
    super({
      whitelist: true,
      forbidNonWhitelisted: true,
      transform: true,
      exceptionFactory: (errors) => RequestValidationError.fromClassValidator(errors),
    });
  }

  protected override validate(object: object, validatorOptions?: ValidatorOptions): Promise<ValidationError[]> {
    return validateRequest(object, validatorOptions);
  }
}
