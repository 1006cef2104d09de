/**
 * The capability editor's model (issue 24): pure functions over the descriptor as JSON. The JSON view is the single
 * source of truth: the form reads the last descriptor that parsed and writes through `setIn`, which keeps every
 * member it does not know (a typo stays in the JSON for the service to name). Unit-tested in
 * test/unit/capability-editor-model.spec.ts; the Preact parts are in editor.tsx and preview.tsx.
 */
import {
  CAPABILITY_MODES,
  COMPONENTS,
  DEFAULT_REFRESH_INTERVAL_SECONDS,
  DEFAULT_SURFACE_GUIDANCE,
  TYPICAL_COMPONENTS,
  type CapabilityMode,
} from '../../../packages/rules/src/descriptors/capability-descriptor';
import { isObject } from '../../shared/json';

export type JsonObject = Record<string, unknown>;
export type Path = Array<string | number>;

export {
  CAPABILITY_MODES,
  COMPONENTS,
  INTENTS,
  PLACEMENTS,
  FIELD_FORMATS,
} from '../../../packages/rules/src/descriptors/capability-descriptor';
export type { CapabilityMode };

/** The JSON view's text read as a descriptor: an object, or why it is not one (the parser's reason). */
export function parseDocument(text: string): { value: JsonObject; error?: undefined } | { value?: undefined; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
  return isObject(value) ? { value } : { error: 'it must be a JSON object ({ … })' };
}

/** How the JSON view shows a descriptor the form changed. */
export function formatDocument(value: unknown): string {
  return JSON.stringify(value, null, 2);
}

export function getIn(value: unknown, path: Path): unknown {
  let current = value;
  for (const key of path) {
    if (typeof key === 'number') current = Array.isArray(current) ? current[key] : undefined;
    else current = isObject(current) ? current[key] : undefined;
  }
  return current;
}

/**
 * A copy of `value` with `path` set (`undefined` removes the member or array item). Members keep their place, new
 * ones go last, missing parents are created (an object, or an array for a numeric key).
 */
export function setIn(value: unknown, path: Path, next: unknown): unknown {
  if (path.length === 0) return next;
  const [key, ...rest] = path;
  if (typeof key === 'number') {
    const list = Array.isArray(value) ? [...(value as unknown[])] : [];
    const child = setIn(list[key], rest, next);
    if (child === undefined && rest.length === 0) list.splice(key, 1);
    else list[key] = child;
    return list;
  }
  const object: JsonObject = isObject(value) ? { ...value } : {};
  const child = setIn(object[key], rest, next);
  if (child === undefined) delete object[key];
  else object[key] = child;
  return object;
}

/** `['capabilities', 0, 'surfaceGuidance', 'title']` → `capabilities[0].surfaceGuidance.title`, as the service names fields. */
export function pathText(path: Path): string {
  return path.reduce<string>((text, key) => (typeof key === 'number' ? `${text}[${key}]` : text ? `${text}.${key}` : key), '');
}

/** One error of a refused descriptor (the problem's `errors`), as far as the editor needs it. */
export interface FieldIssue {
  field: string;
  message: string;
}

/** Whether an error's field is `path` or inside it (`capabilities[0].schema` holds `capabilities[0].schema.properties.a`). */
export function fieldWithin(field: string, path: string): boolean {
  return field === path || field.startsWith(`${path}.`) || field.startsWith(`${path}[`);
}

/** The messages of the errors a form field shows: those of its path and inside it. */
export function messagesAt(issues: FieldIssue[], path: Path): string[] {
  const text = pathText(path);
  return issues.filter((issue) => fieldWithin(issue.field, text)).map((issue) => issue.message);
}

/** Errors inside `within` that none of the form's `shown` fields claims (an unknown member, a member of another mode). */
export function unclaimedIssues(issues: FieldIssue[], within: Path, shown: Path[]): FieldIssue[] {
  const scope = pathText(within);
  const claimed = shown.map(pathText);
  return issues.filter((issue) => fieldWithin(issue.field, scope) && !claimed.some((path) => fieldWithin(issue.field, path)));
}

/** The names of the members an example has per mode (the descriptor schema's `examples` descriptions). */
export const EXAMPLE_MEMBERS: Record<CapabilityMode, { request: 'params' | 'input' | 'event' | null; response: 'response' | 'data' }> = {
  state: { request: 'params', response: 'response' },
  action: { request: 'input', response: 'response' },
  history: { request: 'params', response: 'response' },
  realtime: { request: null, response: 'data' },
  webhook: { request: 'event', response: 'data' },
};

/** Members only one mode has; changing the mode drops the others' (the service would refuse them). */
const MODE_ONLY: Record<string, CapabilityMode> = { refreshInterval: 'state', heartbeatInterval: 'realtime', events: 'webhook' };

export function modeOf(capability: unknown): CapabilityMode {
  const type = isObject(capability) ? capability.type : undefined;
  return (CAPABILITY_MODES as readonly unknown[]).includes(type) ? (type as CapabilityMode) : 'state';
}

/** A capability name not yet taken: the mode, then `<mode>_2`, `<mode>_3` … (the service's own default naming). */
export function freeName(mode: CapabilityMode, taken: string[]): string {
  if (!taken.includes(mode)) return mode;
  for (let n = 2; ; n += 1) if (!taken.includes(`${mode}_${n}`)) return `${mode}_${n}`;
}

export function capabilitiesOf(document: unknown): unknown[] {
  const list = isObject(document) ? document.capabilities : undefined;
  return Array.isArray(list) ? list : [];
}

function namesOf(document: unknown): string[] {
  return capabilitiesOf(document)
    .map((c) => (isObject(c) && typeof c.name === 'string' ? c.name : ''))
    .filter(Boolean);
}

/** A new capability of a mode, with the parts the editor fills in and an empty example to start from. */
export function newCapability(mode: CapabilityMode, taken: string[]): JsonObject {
  const members = EXAMPLE_MEMBERS[mode];
  const example: JsonObject = {};
  if (members.request === 'event') example.event = `${freeName(mode, taken)}.updated`;
  else if (members.request) example[members.request] = {};
  example[members.response] = {};
  return {
    type: mode,
    name: freeName(mode, taken),
    description: '',
    schema: { type: 'object', properties: {} },
    ...(mode === 'state' ? { refreshInterval: DEFAULT_REFRESH_INTERVAL_SECONDS } : {}),
    surfaceGuidance: { ...DEFAULT_SURFACE_GUIDANCE[mode], preferredComponents: [...TYPICAL_COMPONENTS[mode]] },
    examples: [example],
  };
}

export function addCapability(document: JsonObject, mode: CapabilityMode): JsonObject {
  const list = capabilitiesOf(document);
  return { ...document, capabilities: [...list, newCapability(mode, namesOf(document))] };
}

export function removeCapability(document: JsonObject, index: number): JsonObject {
  return { ...document, capabilities: capabilitiesOf(document).filter((_, i) => i !== index) };
}

/**
 * A capability in another mode: members of other modes dropped, the state default interval added, the examples'
 * members renamed (`params` ↔ `input`, `response` ↔ `data`), the surface guidance left as written.
 */
export function changeMode(capability: unknown, mode: CapabilityMode): JsonObject {
  const source = isObject(capability) ? capability : {};
  const from = EXAMPLE_MEMBERS[modeOf(source)];
  const to = EXAMPLE_MEMBERS[mode];
  const next: JsonObject = {};
  for (const [key, value] of Object.entries(source)) {
    if (MODE_ONLY[key] && MODE_ONLY[key] !== mode) continue;
    next[key] = key === 'examples' && Array.isArray(value) ? value.map((example) => renameExample(example, from, to)) : value;
  }
  next.type = mode;
  if (mode === 'state' && next.refreshInterval === undefined) next.refreshInterval = DEFAULT_REFRESH_INTERVAL_SECONDS;
  return next;
}

function renameExample(example: unknown, from: (typeof EXAMPLE_MEMBERS)[CapabilityMode], to: (typeof EXAMPLE_MEMBERS)[CapabilityMode]) {
  if (!isObject(example)) return example;
  const renamed: JsonObject = {};
  for (const [key, value] of Object.entries(example)) {
    if (key === from.response) renamed[to.response] = value;
    else if (key === from.request && from.request !== 'event' && to.request && to.request !== 'event') renamed[to.request] = value;
    else if (key === from.request) continue;
    else renamed[key] = value;
  }
  return renamed;
}

/** What the widget is drawn with in /app: the listed components, or the mode's typical ones (the service's defaults). */
export function preferredComponentsOf(capability: unknown): string[] {
  const mode = modeOf(capability);
  const guidance = isObject(capability) && isObject(capability.surfaceGuidance) ? capability.surfaceGuidance : {};
  const listed = Array.isArray(guidance.preferredComponents)
    ? guidance.preferredComponents
    : Array.isArray(guidance.components)
      ? guidance.components
      : undefined;
  if (listed === undefined) return [...TYPICAL_COMPONENTS[mode]];
  const known = listed.filter((c, i): c is string => (COMPONENTS as readonly unknown[]).includes(c) && listed.indexOf(c) === i);
  // An empty list lets the service pick the typical one.
  return known.length > 0 ? known : [TYPICAL_COMPONENTS[mode][0]];
}

/** The surfaces that show the capability: the listed ones, or the mode's default. */
export function placementsOf(capability: unknown): string[] {
  const guidance = isObject(capability) && isObject(capability.surfaceGuidance) ? capability.surfaceGuidance : {};
  return Array.isArray(guidance.placement)
    ? guidance.placement.filter((p): p is string => typeof p === 'string')
    : [...DEFAULT_SURFACE_GUIDANCE[modeOf(capability)].placement];
}

/** A list with `item` on or off: switched on, it goes last (the order of preference is the order of choosing). */
export function toggled(list: string[], item: string, on: boolean): string[] {
  const without = list.filter((entry) => entry !== item);
  return on ? [...without, item] : without;
}

/** A short-form schema (`{ account: { type, required } }`) expanded to the full form the service stores. */
export function fullSchema(schema: unknown): JsonObject {
  if (!isObject(schema)) return { type: 'object', properties: {} };
  if (schema.type === 'object' || isObject(schema.properties)) return schema;
  const properties: JsonObject = {};
  const required: string[] = [];
  for (const [name, field] of Object.entries(schema)) {
    if (!isObject(field)) continue;
    const { required: isRequired, ...rest } = field;
    properties[name] = rest;
    if (isRequired === true) required.push(name);
  }
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

/** Required params without a `default`: a state widget in /app is not polled then (docs/components.md). */
export function requiredWithoutDefault(schema: unknown): string[] {
  const full = fullSchema(schema);
  const properties = isObject(full.properties) ? full.properties : {};
  const required = Array.isArray(full.required) ? full.required.filter((r): r is string => typeof r === 'string') : [];
  return required.filter((name) => !(isObject(properties[name]) && 'default' in properties[name]));
}

/** The first example's member (`params`, `input`, `response`, `data`, `event`), or undefined. */
export function exampleMember(capability: unknown, member: string): unknown {
  return getIn(capability, ['examples', 0, member]);
}

/** The data a widget of this capability would get from the runtime, as the first example says it. */
export function exampleData(capability: unknown): unknown {
  const mode = modeOf(capability);
  const data = exampleMember(capability, EXAMPLE_MEMBERS[mode].response);
  // A history example is one item: the widget shows a list of items.
  if (mode === 'history' && data !== undefined && !Array.isArray(data)) return [data];
  return data;
}

/**
 * The surface component /app would be answered for this capability (GET /v1/surfaces/:placement), with the example's
 * data in place of the runtime's: what the preview hands to /app's own `Widget`.
 */
export function previewModel(capability: unknown, packageName: string) {
  const source = isObject(capability) ? capability : {};
  const mode = modeOf(source);
  const guidance = isObject(source.surfaceGuidance) ? source.surfaceGuidance : {};
  const components = preferredComponentsOf(source);
  const name = typeof source.name === 'string' && source.name ? source.name : freeName(mode, []);
  const title = typeof guidance.title === 'string' && guidance.title.trim() ? guidance.title : undefined;
  const data = exampleData(source);
  return {
    package: { id: 'preview', name: packageName.trim() || 'Your package' },
    capability: { name, mode, description: typeof source.description === 'string' ? source.description : '' },
    intent: typeof guidance.intent === 'string' ? guidance.intent : DEFAULT_SURFACE_GUIDANCE[mode].intent,
    component: components[0],
    components,
    ...(title ? { title } : {}),
    ...(isObject(guidance.fields) ? { fields: guidance.fields } : {}),
    ...(mode === 'state' ? { params: {} } : {}),
    data: data === undefined ? null : data,
    fetchedAt: null,
    stale: false,
    ...(mode === 'action' ? { input: { schema: fullSchema(source.schema), example: exampleMember(source, 'input') ?? null } } : {}),
  };
}

/** Top-level field names of the example data not yet in `surfaceGuidance.fields`: what "add fields" offers. */
export function exampleFieldNames(capability: unknown): string[] {
  const data = exampleMember(capability, EXAMPLE_MEMBERS[modeOf(capability)].response);
  const fields = getIn(capability, ['surfaceGuidance', 'fields']);
  if (!isObject(data)) return [];
  return Object.keys(data).filter((key) => !(isObject(fields) && key in fields));
}

/**
 * For the new version page: the stored capabilities without the runtime each was stored with when it is `runtimeUrl`
 * (the version's), so a runtime typed for the new version applies to all of them; another runtime is kept.
 */
export function withoutRuntimeUrl(capabilities: unknown[], runtimeUrl: string | undefined): unknown[] {
  return capabilities.map((capability) => {
    if (!isObject(capability) || capability.runtimeUrl !== runtimeUrl) return capability;
    const { runtimeUrl: _stored, ...rest } = capability;
    return rest;
  });
}
