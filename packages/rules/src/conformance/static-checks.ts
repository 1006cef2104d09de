import { isObject } from '../json';
import { CapabilityDescriptor, isPathSafeName, JsonSchema, RISK_TIERS, TYPICAL_COMPONENTS } from '../descriptors/capability-descriptor';
import { checkSchema, jsonPath, validatorFor } from '../descriptors/schema-checker';
import { componentChecks } from './component-checks';
import { CheckOutcome, checkOver } from './conformance-report';

/**
 * Checks that read the descriptors only (no network): the schema and
 * documentation dimensions and the static half of contracts. They run in local
 * and full validation alike.
 */

export const MIN_DESCRIPTION_LENGTH = 20;
/** History request params the service itself sets. */
export const HISTORY_PAGING_PARAMS = ['limit', 'cursor', 'direction'];

type Visit = (node: Record<string, unknown>, path: Array<string | number>) => void;

/** Visits every subschema (properties, items, combinators, definitions). */
function walkSchema(node: unknown, path: Array<string | number>, visit: Visit): void {
  if (!isObject(node)) return;
  visit(node, path);
  for (const key of ['properties', 'patternProperties', 'definitions', '$defs', 'dependentSchemas']) {
    const map = node[key];
    if (isObject(map)) for (const [name, child] of Object.entries(map)) walkSchema(child, [...path, key, name], visit);
  }
  for (const key of ['items', 'additionalItems', 'additionalProperties', 'contains', 'not', 'if', 'then', 'else', 'propertyNames']) {
    const child = node[key];
    if (Array.isArray(child)) child.forEach((c, i) => walkSchema(c, [...path, key, i], visit));
    else walkSchema(child, [...path, key], visit);
  }
  for (const key of ['allOf', 'anyOf', 'oneOf', 'prefixItems']) {
    const list = node[key];
    if (Array.isArray(list)) list.forEach((c, i) => walkSchema(c, [...path, key, i], visit));
  }
}

/** Every schema a capability declares, labelled for details. */
function schemasOf(capability: CapabilityDescriptor): Array<{ label: string; schema: JsonSchema }> {
  const out = [{ label: `${capability.name}.schema`, schema: capability.schema }];
  if (capability.responseSchema) out.push({ label: `${capability.name}.responseSchema`, schema: capability.responseSchema });
  for (const event of capability.events ?? []) out.push({ label: `${capability.name}.events[${event.type}].schema`, schema: event.schema });
  return out;
}

function resolvesToDescribed(root: JsonSchema, property: Record<string, unknown>): boolean {
  if (typeof property.description === 'string' && property.description.trim() !== '') return true;
  if (typeof property.$ref !== 'string' || !property.$ref.startsWith('#/')) return false;
  let target: unknown = root;
  for (const part of property.$ref.slice(2).split('/')) target = isObject(target) ? target[part] : undefined;
  return isObject(target) && typeof target.description === 'string' && target.description.trim() !== '';
}

export function schemaChecks(capabilities: CapabilityDescriptor[]): CheckOutcome[] {
  const valid = checkOver(
    'schema.valid',
    5,
    capabilities.map((c) => {
      const fault = checkSchema(c.schema);
      return { ok: fault === null, why: fault ? `${c.name}.schema: ${fault.detail} at ${fault.schemaPath}` : undefined };
    }),
    'every capability schema is a valid draft-07 or 2020-12 object schema with typed properties',
    'no capabilities',
  );

  const properties: Array<{ ok: boolean; why?: string }> = [];
  const required: Array<{ ok: boolean; why?: string }> = [];
  const arrays: Array<{ ok: boolean; why?: string }> = [];
  for (const capability of capabilities) {
    for (const { label, schema } of schemasOf(capability)) {
      const undeclared: string[] = [];
      walkSchema(schema, [], (node, path) => {
        if (isObject(node.properties)) {
          for (const [name, property] of Object.entries(node.properties)) {
            if (!isObject(property)) continue;
            const ok = resolvesToDescribed(schema, property);
            properties.push({ ok, why: ok ? undefined : `${label} ${jsonPath([...path, 'properties', name])} has no description` });
          }
        }
        if (Array.isArray(node.required)) {
          const declared = isObject(node.properties) ? Object.keys(node.properties) : [];
          const patterns = isObject(node.patternProperties) ? Object.keys(node.patternProperties) : [];
          for (const name of node.required) {
            if (typeof name !== 'string') continue;
            const matchesPattern = patterns.some((p) => {
              try {
                return new RegExp(p, 'u').test(name);
              } catch {
                return false;
              }
            });
            if (!declared.includes(name) && !matchesPattern) undeclared.push(`${jsonPath([...path, 'required'])} names "${name}"`);
          }
        }
        const isArray = node.type === 'array' || (Array.isArray(node.type) && node.type.includes('array'));
        if (isArray) {
          const ok = 'items' in node || 'prefixItems' in node;
          arrays.push({ ok, why: ok ? undefined : `${label} ${jsonPath(path)} is an array without "items"` });
        }
      });
      required.push({
        ok: undeclared.length === 0,
        why: undeclared.length ? `${label}: ${undeclared.join(', ')}, which is not a declared property` : undefined,
      });
    }
  }

  const responseSchemas = capabilities.filter((c) => c.responseSchema !== undefined);
  const eventSchemas = capabilities.flatMap((c) => (c.events ?? []).map((e) => ({ capability: c.name, event: e })));
  return [
    valid,
    checkOver('schema.property_descriptions', 4, properties, 'every declared property has a description', 'no schema declares properties'),
    checkOver('schema.required_declared', 4, required, '"required" lists only declared properties', 'no capabilities'),
    checkOver('schema.array_items', 2, arrays, 'every array declares the schema of its items', 'no schema declares an array'),
    checkOver(
      'schema.response_schemas',
      3,
      responseSchemas.map((c) => {
        const fault = checkSchema(c.responseSchema);
        return { ok: fault === null, why: fault ? `${c.name}.responseSchema: ${fault.detail} at ${fault.schemaPath}` : undefined };
      }),
      'every responseSchema is a valid object schema',
      'no capability declares a responseSchema',
    ),
    checkOver(
      'schema.event_schemas',
      2,
      eventSchemas.map(({ capability, event }) => {
        const fault =
          checkSchema(event.schema) ?? (isObject(event.schema.properties) ? null : { detail: 'declares no properties', schemaPath: '$' });
        return {
          ok: fault === null,
          why: fault ? `${capability}.events[${event.type}].schema: ${fault.detail} at ${fault.schemaPath}` : undefined,
        };
      }),
      'every webhook event type has a valid object schema with properties',
      'no webhook-mode capability',
    ),
  ];
}

export function staticContractChecks(riskTier: string, capabilities: CapabilityDescriptor[]): CheckOutcome[] {
  const seen = new Set<string>();
  const names = capabilities.map((c) => {
    if (!isPathSafeName(c.name))
      return { ok: false, why: `"${c.name}" cannot be one segment of a runtime path without encoding (letters, digits, - . _ ~ only)` };
    if (seen.has(c.name)) return { ok: false, why: `"${c.name}" is used by more than one capability` };
    seen.add(c.name);
    return { ok: true };
  });
  const intervalOk = (v: unknown, max: number) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= max;
  const intervals = capabilities
    .filter((c) => c.type === 'state' || c.type === 'realtime')
    .map((c) => {
      const [field, max] = c.type === 'state' ? (['refreshInterval', 86_400] as const) : (['heartbeatInterval', 3_600] as const);
      const ok = intervalOk(c[field], max);
      return { ok, why: ok ? undefined : `${c.name} (${c.type}) needs ${field}: an integer number of seconds from 1 to ${max}` };
    });
  const needsResponseSchema = capabilities.filter((c) => c.type === 'state' || c.type === 'history');
  const actions = capabilities.filter((c) => c.type === 'action');
  const tierKnown = (RISK_TIERS as readonly string[]).includes(riskTier);
  const tierOk = tierKnown && !(riskTier === 'data_only' && actions.length > 0);
  return [
    checkOver('contracts.names_unique', 2, names, 'capability names are unique and path-safe', 'no capabilities'),
    checkOver(
      'contracts.mode_intervals',
      2,
      intervals,
      'state capabilities declare refreshInterval and realtime capabilities heartbeatInterval',
      'no state or realtime capability',
    ),
    checkOver(
      'contracts.response_schema_declared',
      2,
      needsResponseSchema.map((c) => ({
        ok: c.responseSchema !== undefined,
        why: c.responseSchema
          ? undefined
          : `${c.name} (${c.type}) declares no responseSchema for its ${c.type === 'state' ? 'data' : 'items'}`,
      })),
      'every state and history capability declares a responseSchema',
      'no state or history capability',
    ),
    {
      id: 'contracts.risk_tier',
      weight: 1,
      fraction: tierOk ? 1 : 0,
      detail: !tierKnown
        ? `riskTier "${riskTier}" is not one of ${RISK_TIERS.join(', ')}`
        : tierOk
          ? `riskTier ${riskTier} allows every capability mode used`
          : `riskTier data_only cannot carry action capabilities (${actions.map((c) => c.name).join(', ')}); use action_capable or above`,
    },
  ];
}

/**
 * History params without `limit`, `cursor` and `direction`, which the service sets
 * itself, unless the capability's schema declares them.
 */
export function withoutPagingParams(capability: CapabilityDescriptor, params: Record<string, unknown>): Record<string, unknown> {
  const declared = isObject(capability.schema.properties) ? capability.schema.properties : {};
  return Object.fromEntries(Object.entries(params).filter(([k]) => !HISTORY_PAGING_PARAMS.includes(k) || k in declared));
}

/** The part of an example that a given schema describes (spec leaves the example shape open; see docs/conformance.md). */
export function exampleRequest(capability: CapabilityDescriptor, example: unknown): Record<string, unknown> | undefined {
  if (!isObject(example)) return undefined;
  const part = capability.type === 'action' ? example.input : example.params;
  return isObject(part) ? part : undefined;
}

function exampleProblems(capability: CapabilityDescriptor, example: unknown): string[] {
  if (!isObject(example)) return ['is not an object'];
  const problems: string[] = [];
  const check = (schema: JsonSchema, value: unknown, what: string) => {
    const result = validatorFor(schema)(value);
    if (!result.valid) problems.push(`${what} does not match its schema (${result.errors.slice(0, 3).join(', ')})`);
  };
  let described = false;
  if (capability.type === 'webhook') {
    if (typeof example.event === 'string' && isObject(example.data)) {
      described = true;
      const event = capability.events?.find((e) => e.type === example.event);
      if (!event) problems.push(`event "${example.event}" is not registered`);
      else check(event.schema, example.data, 'data');
    }
  } else if (capability.type === 'realtime') {
    if ('data' in example) {
      described = true;
      if (capability.responseSchema) check(capability.responseSchema, example.data, 'data');
    }
  } else {
    const key = capability.type === 'action' ? 'input' : 'params';
    const request = example[key];
    if (request !== undefined) {
      described = true;
      if (!isObject(request)) problems.push(`${key} is not an object`);
      else {
        check(capability.schema, capability.type === 'history' ? withoutPagingParams(capability, request) : request, key);
      }
    }
  }
  if ('response' in example) {
    described = true;
    if (capability.responseSchema) check(capability.responseSchema, example.response, 'response');
  }
  if (!described) {
    const expected = { action: 'input', state: 'params', history: 'params', realtime: 'data', webhook: 'event and data' }[capability.type];
    problems.push(`has no ${expected}`);
  }
  return problems;
}

export function documentationChecks(capabilities: CapabilityDescriptor[]): CheckOutcome[] {
  const descriptions = capabilities.flatMap((c) => {
    const own = c.description.trim();
    const ownOk = own.length >= MIN_DESCRIPTION_LENGTH && own.toLowerCase() !== c.name.toLowerCase();
    const items = [
      {
        ok: ownOk,
        why: ownOk
          ? undefined
          : `${c.name}: description must say what the capability does in at least ${MIN_DESCRIPTION_LENGTH} characters`,
      },
    ];
    for (const event of c.events ?? []) {
      const ok = event.description.trim().length >= MIN_DESCRIPTION_LENGTH;
      items.push({
        ok,
        why: ok ? undefined : `${c.name} event ${event.type}: description shorter than ${MIN_DESCRIPTION_LENGTH} characters`,
      });
    }
    return items;
  });
  const examples = capabilities.map((c) => ({
    ok: (c.examples?.length ?? 0) > 0,
    why: `${c.name} has no examples`,
  }));
  const exampleValidity = capabilities.flatMap((c) =>
    (c.examples ?? []).map((example, i) => {
      const problems = exampleProblems(c, example);
      return { ok: problems.length === 0, why: `${c.name}.examples[${i}] ${problems.join('; ')}` };
    }),
  );
  const components = capabilities.map((c) => {
    const typical = TYPICAL_COMPONENTS[c.type];
    const ok = c.surfaceGuidance.preferredComponents.some((p) => typical.includes(p));
    return {
      ok,
      why: `${c.name} (${c.type}) prefers ${c.surfaceGuidance.preferredComponents.join(', ')}; typical for ${c.type}: ${typical.join(', ')}`,
    };
  });
  return [
    checkOver('documentation.descriptions', 4, descriptions, 'capabilities and event types are described', 'no capabilities'),
    checkOver('documentation.examples', 3, examples, 'every capability has at least one example', 'no capabilities'),
    checkOver('documentation.examples_valid', 3, exampleValidity, 'every example matches the schemas it illustrates', 'no examples'),
    checkOver('documentation.components', 3, components, 'every capability prefers a component typical for its mode', 'no capabilities'),
    // What a user sees is what the provider meant: components against the examples, field names, pollable widgets.
    ...componentChecks(capabilities),
  ];
}
