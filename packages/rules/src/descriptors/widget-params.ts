import { isObject } from '../json';
import { CapabilityDescriptor } from './capability-descriptor';
import { cachedValidatorFor } from './schema-checker';

/**
 * The widget params of a state capability: what every poll sends as `params`,
 * and so what its widget shows. They are the schema's top-level `default`s (an
 * empty object when it has none), a stable choice that depends on the
 * descriptor alone: neither a user's one-off call nor the examples change
 * them (docs/components.md, "Which params a widget shows"). When they are not
 * valid (the schema requires a field without a default): undefined, and the
 * capability is not polled (its widget says it has no data).
 *
 * Here, in the descriptors leaf, because both the runtime bridge (the poller,
 * the surfaces) and conformance (which warns about such a widget) need the
 * same answer, and conformance may not import the bridge.
 */
export function widgetParams(capability: CapabilityDescriptor): Record<string, unknown> | undefined {
  const defaults = schemaDefaults(capability);
  return cachedValidatorFor(capability.schema)(defaults).valid ? defaults : undefined;
}

/** The schema's top-level `default`s, by property name. */
export function schemaDefaults(capability: CapabilityDescriptor): Record<string, unknown> {
  const properties = isObject(capability.schema.properties) ? capability.schema.properties : {};
  return Object.fromEntries(
    Object.entries(properties).flatMap(([name, property]) =>
      isObject(property) && 'default' in property ? [[name, property.default]] : [],
    ),
  );
}

/** Top-level `required` params that have no `default`: what keeps a state widget from being polled. */
export function requiredWithoutDefault(capability: CapabilityDescriptor): string[] {
  const required = Array.isArray(capability.schema.required) ? capability.schema.required : [];
  const defaults = schemaDefaults(capability);
  return required.filter((name): name is string => typeof name === 'string' && !(name in defaults));
}
