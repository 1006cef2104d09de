import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { ProblemError } from '../../common/errors/problem-error';
import { CapabilityDescriptor, jsonPath, JsonSchema } from '@soul-service/rules';
import { isObject } from '../../common/json';

/** One failed check of a value against a capability schema, named the way a caller reads it. */
export interface SchemaViolation {
  /** `missing_field` for an absent required field, `invalid_format` for every other mismatch. */
  code: 'missing_field' | 'invalid_format';
  /** The field at fault in the caller's terms: `params.account`, `input.amount`, `data.available`. */
  field: string;
  /** JSONPath into the capability schema: `$.properties.account`. */
  schemaPath: string;
  detail: string;
}

export interface SchemaCheck {
  valid: boolean;
  /** Every violation; the first `missing_field` comes first, as it is what a caller fixes first. */
  violations: SchemaViolation[];
}

interface CompiledCapability {
  /** params (state, history) or input (action), against `schema`. */
  request: ValidateFunction;
  /** `data` of a state answer (`responseSchema` when declared, else `schema`, the spec's "data per schema"). */
  stateData?: ValidateFunction;
  /** `result` of an action, each history item, each realtime event: only when a `responseSchema` is declared. */
  response?: ValidateFunction;
}

const DRAFT_2020 = /^https:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/;
/** The spec's `invalid_format` wants a UUID "RFC 4122 lowercase with hyphens"; ajv-formats' own is case-insensitive. */
const LOWERCASE_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** The paging params of the history contract: always allowed, whatever the capability schema declares. */
const HISTORY_PAGING: Record<string, JsonSchema> = {
  limit: { type: 'integer', minimum: 1 },
  cursor: { type: 'string' },
  direction: { type: 'string' },
};

/**
 * Same settings as the package validator (`validatorFor` in schema-checker):
 * non-strict (accepted descriptors were checked strictly at creation), every
 * error, formats checked. One ajv per schema, so a provider's `$id` can never
 * collide with another package's.
 */
function compile(schema: JsonSchema): ValidateFunction {
  const draft2020 = typeof schema.$schema === 'string' && DRAFT_2020.test(schema.$schema);
  const ajv = draft2020 ? new Ajv2020({ strict: false, allErrors: true }) : new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addFormat('uuid', LOWERCASE_UUID);
  // ajv knows each draft's meta-schema under one spelling only; the others were accepted at creation.
  const metaSchema = draft2020 ? 'https://json-schema.org/draft/2020-12/schema' : 'http://json-schema.org/draft-07/schema#';
  return ajv.compile(schema.$schema === undefined ? schema : { ...schema, $schema: metaSchema });
}

/** History params also carry the contract's `limit`, `cursor` and `direction`: declared for the check when the schema leaves them out. */
function withPaging(schema: JsonSchema): JsonSchema {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const missing = Object.keys(HISTORY_PAGING).filter((name) => !(name in properties));
  if (missing.length === 0) return schema;
  return { ...schema, properties: { ...properties, ...Object.fromEntries(missing.map((name) => [name, HISTORY_PAGING[name]])) } };
}

function pathSegments(pointer: string): Array<string | number> {
  return pointer
    .split('/')
    .filter(Boolean)
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s.replace(/~1/g, '/').replace(/~0/g, '~')));
}

function fieldName(root: string, segments: Array<string | number>): string {
  return `${root}${jsonPath(segments).slice(1)}`;
}

function violationOf(error: ErrorObject, root: string): SchemaViolation {
  const at = pathSegments(error.instancePath);
  // `#/properties/amount/maximum` → `$.properties.amount`: the subschema, not the keyword inside it.
  const schemaAt = pathSegments(error.schemaPath.replace(/^#/, '')).slice(0, -1);
  if (error.keyword === 'required' || error.keyword === 'dependentRequired' || error.keyword === 'dependencies') {
    const missing = String((error.params as { missingProperty?: string }).missingProperty);
    return {
      code: 'missing_field',
      field: fieldName(root, [...at, missing]),
      schemaPath: jsonPath([...schemaAt, 'properties', missing]),
      detail: `${fieldName(root, [...at, missing])} is required`,
    };
  }
  if (error.keyword === 'additionalProperties') {
    const extra = String((error.params as { additionalProperty?: string }).additionalProperty);
    return {
      code: 'invalid_format',
      field: fieldName(root, [...at, extra]),
      schemaPath: jsonPath([...schemaAt, 'additionalProperties']),
      detail: `${fieldName(root, [...at, extra])} is not a field of the capability schema`,
    };
  }
  const field = at.length > 0 ? fieldName(root, at) : root;
  const allowed = (error.params as { allowedValues?: unknown[] }).allowedValues;
  const message =
    error.keyword === 'enum' && Array.isArray(allowed)
      ? `must be one of: ${allowed.map((v) => JSON.stringify(v)).join(', ')}`
      : error.message;
  return { code: 'invalid_format', field, schemaPath: jsonPath(schemaAt), detail: `${field} ${message ?? 'is not valid'}` };
}

function outcome(validate: ValidateFunction, value: unknown, root: string): SchemaCheck {
  if (validate(value)) return { valid: true, violations: [] };
  const violations = (validate.errors ?? []).map((e) => violationOf(e, root));
  // ajv reports every failing keyword of a union member: keep one line per field and keyword.
  const seen = new Set<string>();
  const unique = violations.filter((v) => !seen.has(v.detail) && seen.add(v.detail));
  unique.sort((a, b) => (a.code === b.code ? 0 : a.code === 'missing_field' ? -1 : 1));
  return { valid: false, violations: unique };
}

/**
 * The capability schema applied at run time: a call's `params`/`input` before
 * any runtime call, and the runtime's answer after it. Validators are compiled
 * once per descriptor object: the installs service keeps one frozen, shared
 * descriptor list per package version, so that is once per version and process.
 */
export class CapabilitySchemas {
  private static readonly compiled = new WeakMap<CapabilityDescriptor, CompiledCapability>();

  private static of(capability: CapabilityDescriptor): CompiledCapability {
    let entry = this.compiled.get(capability);
    if (!entry) {
      const request = compile(capability.type === 'history' ? withPaging(capability.schema) : capability.schema);
      const response = capability.responseSchema ? compile(capability.responseSchema) : undefined;
      entry = { request, response, stateData: capability.type === 'state' ? (response ?? request) : undefined };
      this.compiled.set(capability, entry);
    }
    return entry;
  }

  /** `params` (state, history) or `input` (action) against the capability's `schema`. */
  static checkRequest(capability: CapabilityDescriptor, value: Record<string, unknown>): SchemaCheck {
    return outcome(this.of(capability).request, value, capability.type === 'action' ? 'input' : 'params');
  }

  /** Throws the spec's 400 (`missing_field` or `invalid_format`, naming the field) when the request does not match the schema. */
  static assertRequest(capability: CapabilityDescriptor, value: Record<string, unknown>): void {
    const check = this.checkRequest(capability, value);
    if (check.valid) return;
    const [first] = check.violations;
    throw new ProblemError(first.code, `${first.detail} (capability ${capability.name} schema)`, {
      field: first.field,
      schema_path: first.schemaPath,
      // The problem details member `errors` (field, schema_path, message, code), as for descriptors; `detail` kept for older clients.
      errors: check.violations
        .slice(0, 20)
        .map(({ code, field, schemaPath, detail }) => ({ field, schema_path: schemaPath, message: detail, code, detail })),
    });
  }

  /**
   * An `ok` answer's objects against the schema: a state's `data` (its
   * `responseSchema` when declared, else its `schema`), an action's `result`
   * and each history item (only against a declared `responseSchema`).
   */
  static checkAnswer(capability: CapabilityDescriptor, json: Record<string, unknown>): SchemaCheck {
    const compiled = this.of(capability);
    if (capability.type === 'state') return outcome(compiled.stateData!, json.data, 'data');
    if (!compiled.response) return { valid: true, violations: [] };
    if (capability.type === 'action') return outcome(compiled.response, json.result, 'result');
    if (capability.type === 'history' && Array.isArray(json.items)) {
      for (const [index, item] of json.items.entries()) {
        const check = outcome(compiled.response, item, `items[${index}]`);
        if (!check.valid) return check;
      }
    }
    return { valid: true, violations: [] };
  }
}
