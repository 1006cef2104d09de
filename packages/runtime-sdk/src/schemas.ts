import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { JsonSchema } from './descriptor';

/** The first problem of a value against a schema: the field (`params.account`) and what is wrong with it. */
export interface SchemaViolation {
  field: string;
  message: string;
}

const DRAFT_2020 = 'https://json-schema.org/draft/2020-12/schema';

/**
 * Draft-07 and 2020-12, as the service accepts both (docs/descriptor.md,
 * "Schemas"), chosen by `$schema`. Not strict: descriptors carry keywords such
 * as `description` everywhere, and unknown ones were already refused by the
 * service when the package was created.
 */
function compilers(): { draft7: Ajv; draft2020: Ajv2020 } {
  const options = { allErrors: false, strict: false, validateSchema: false } as const;
  const draft7 = new Ajv(options);
  const draft2020 = new Ajv2020(options);
  addFormats(draft7);
  addFormats(draft2020);
  return { draft7, draft2020 };
}

/** Compiles each schema once; a validator per schema object, so a runtime checks calls without recompiling. */
export class SchemaChecker {
  private readonly ajv = compilers();
  private readonly compiled = new WeakMap<object, ValidateFunction>();

  /** Null when `value` matches, else the first violation, named from `root` (`params`, `input`, `data`, `items[2]`). */
  check(schema: JsonSchema, value: unknown, root: string): SchemaViolation | null {
    const validate = this.validator(schema);
    if (validate(value)) return null;
    return describe(validate.errors?.[0], root);
  }

  private validator(schema: JsonSchema): ValidateFunction {
    let validate = this.compiled.get(schema);
    if (!validate) {
      const { $schema: dialect, ...rest } = schema as Record<string, unknown>;
      validate = dialect === DRAFT_2020 ? this.ajv.draft2020.compile(rest) : this.ajv.draft7.compile(rest);
      this.compiled.set(schema, validate);
    }
    return validate;
  }
}

/** `/a/0/b` under `params` → `params.a[0].b`, and the missing or unexpected property for the keywords that name one. */
function describe(error: ErrorObject | undefined, root: string): SchemaViolation {
  if (!error) return { field: root, message: 'is not valid' };
  const segments = error.instancePath
    .split('/')
    .slice(1)
    .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'required' && typeof params.missingProperty === 'string') segments.push(params.missingProperty);
  if (error.keyword === 'additionalProperties' && typeof params.additionalProperty === 'string') segments.push(params.additionalProperty);
  const field = segments.reduce((path, s) => (/^\d+$/.test(s) ? `${path}[${s}]` : `${path}.${s}`), root);
  const message =
    error.keyword === 'required'
      ? 'is required'
      : error.keyword === 'additionalProperties'
        ? 'is not an allowed field'
        : error.keyword === 'enum'
          ? `must be one of ${JSON.stringify(params.allowedValues)}`
          : (error.message ?? 'is not valid');
  return { field, message };
}
