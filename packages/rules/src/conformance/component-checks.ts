import { isObject } from '../json';
import { CapabilityDescriptor, CapabilityMode } from '../descriptors/capability-descriptor';
import { COMPONENT_READS, DATA_COMPONENTS, fitsWidget, headlineOf } from '../descriptors/component-contracts';
import { requiredWithoutDefault, widgetParams } from '../descriptors/widget-params';
import { CheckOutcome, checkOver } from './conformance-report';

/**
 * Checks that what a user sees is what the provider meant (docs/components.md):
 * the preferred components against the example data, with the same contract
 * functions the browser renders with (`fits`), the field names of
 * `surfaceGuidance.fields`, and whether a state widget can be polled at all.
 * Static (descriptors only), so quick and full runs report them alike.
 */

/**
 * Where an example holds what the widget shows, by mode: a state answer's
 * `data` (`response`), one realtime or webhook event's `data`. Actions show
 * their input form and history widgets are not fed runtime data, so neither
 * has widget data to check (docs/decisions: "component fit").
 */
const WIDGET_DATA_KEY: Partial<Record<CapabilityMode, 'response' | 'data'>> = {
  state: 'response',
  realtime: 'data',
  webhook: 'data',
};

/** The widget data of each example that has any, for the modes whose widget shows runtime data. */
export function exampleWidgetData(capability: CapabilityDescriptor): unknown[] {
  const key = WIDGET_DATA_KEY[capability.type];
  if (!key) return [];
  return (capability.examples ?? [])
    .filter((e) => isObject(e) && key in e && e[key] != null)
    .map((e) => (e as Record<string, unknown>)[key]);
}

/** Whether a component fits the data as the widget judges it: a realtime widget builds its sparkline from live numbers. */
function fitsExample(capability: CapabilityDescriptor, component: string, data: unknown): boolean {
  const liveSeries = capability.type === 'realtime' && headlineOf(data) !== null;
  return fitsWidget(component, data, { liveSeries });
}

interface ComponentFit {
  capability: CapabilityDescriptor;
  /** What the examples hold the data under (`response` or `data`). */
  key: 'response' | 'data';
  examples: number;
  fitting: string[];
  notFitting: string[];
}

/** For each capability with widget data in its examples, which preferred data components fit at least one example. */
export function componentFits(capabilities: CapabilityDescriptor[]): ComponentFit[] {
  const out: ComponentFit[] = [];
  for (const capability of capabilities) {
    const data = exampleWidgetData(capability);
    const judged = capability.surfaceGuidance.preferredComponents.filter((c) => (DATA_COMPONENTS as readonly string[]).includes(c));
    if (data.length === 0 || judged.length === 0) continue;
    const fitting = judged.filter((c) => data.some((d) => fitsExample(capability, c, d)));
    out.push({
      capability,
      key: WIDGET_DATA_KEY[capability.type]!,
      examples: data.length,
      fitting,
      notFitting: judged.filter((c) => !fitting.includes(c)),
    });
  }
  return out;
}

function exampleWords(fit: ComponentFit): string {
  return fit.examples === 1 ? `its example ${fit.key}` : `any of its ${fit.examples} example ${fit.key}s`;
}

function readsOf(component: string): string {
  return `${component} reads ${COMPONENT_READS[component] ?? 'nothing known'}`;
}

/** Blocking: a capability none of whose preferred components fits its examples renders nothing the provider asked for. */
function componentsRender(fits: ComponentFit[]): CheckOutcome {
  const outcome = checkOver(
    'documentation.components_render',
    2,
    fits.map((fit) => ({
      ok: fit.fitting.length > 0,
      why:
        `${fit.capability.name}: none of its preferred components (${fit.notFitting.join(', ')}) fits ${exampleWords(fit)}, ` +
        `so its widget would show none of what it asks for; ${fit.notFitting.map(readsOf).join('; ')}. ` +
        'Answer (and give as the example) data with those fields, or prefer a component the data fits',
    })),
    'every capability has a preferred component its example data fits',
    'no state, realtime or webhook capability has example data',
  );
  return { ...outcome, blocking: true };
}

/**
 * Warning: a preferred component the examples do not fit is left out of the
 * widget while another one fits (when none fits, components_render reports it).
 */
function componentsFit(fits: ComponentFit[]): CheckOutcome {
  const items = fits.flatMap((fit) => [
    ...fit.fitting.map(() => ({ ok: true })),
    ...fit.notFitting.map((component) => ({
      ok: fit.fitting.length === 0,
      why:
        `${fit.capability.name} prefers ${component}, but ${exampleWords(fit)} does not fit it, so the widget leaves it out ` +
        `(it shows ${fit.fitting.join(', ')}); ${readsOf(component)}. Add those fields to the data and the example, ` +
        `or drop ${component} from preferredComponents`,
    })),
  ]);
  const outcome = checkOver(
    'documentation.components_fit',
    0,
    items,
    'every preferred component fits the example data',
    'no state, realtime or webhook capability has example data',
  );
  return { ...outcome, warning: true };
}

/** The top-level field names a capability's data may have: its responseSchema's (or event schemas') properties and its examples' fields. */
function knownFields(capability: CapabilityDescriptor): Set<string> | null {
  const names = new Set<string>();
  const schemas = capability.type === 'webhook' ? (capability.events ?? []).map((e) => e.schema) : [capability.responseSchema];
  let described = false;
  for (const schema of schemas) {
    if (!isObject(schema) || !isObject(schema.properties)) continue;
    described = true;
    for (const name of Object.keys(schema.properties)) names.add(name);
  }
  for (const example of capability.examples ?? []) {
    if (!isObject(example)) continue;
    for (const key of ['response', 'data']) {
      const data = example[key];
      if (!isObject(data)) continue;
      described = true;
      for (const name of Object.keys(data)) names.add(name);
    }
  }
  return described ? names : null;
}

/** Warning: `surfaceGuidance.fields` names a field the data never has (a typo: the label, unit and format are never used). */
function surfaceFields(capabilities: CapabilityDescriptor[]): CheckOutcome {
  const items = capabilities.flatMap((capability) => {
    const fields = Object.keys(capability.surfaceGuidance.fields ?? {});
    const known = knownFields(capability);
    if (fields.length === 0 || known === null) return [];
    return fields.map((name) => ({
      ok: known.has(name),
      why:
        `${capability.name}: surfaceGuidance.fields names "${name}", which is neither a property of its ` +
        `${capability.type === 'webhook' ? 'event schemas' : 'responseSchema'} nor a field of its example data, so its label, unit and format ` +
        `are never used; name a top-level field of the data (${[...known].slice(0, 8).join(', ') || 'none known'})`,
    }));
  });
  const outcome = checkOver(
    'documentation.surface_fields',
    0,
    items,
    'surfaceGuidance.fields names only fields of the data',
    'no capability names surfaceGuidance.fields with a responseSchema or example data to check them against',
  );
  return { ...outcome, warning: true };
}

/** Warning: a state widget whose schema requires a param without a default is never polled and shows no data. */
function widgetParamsCheck(capabilities: CapabilityDescriptor[]): CheckOutcome {
  const widgets = capabilities.filter((c) => c.type === 'state' && c.surfaceGuidance.placement.length > 0);
  const outcome = checkOver(
    'documentation.widget_params',
    0,
    widgets.map((capability) => {
      if (widgetParams(capability) !== undefined) return { ok: true };
      const missing = requiredWithoutDefault(capability);
      const cause =
        missing.length > 0
          ? `its schema requires ${missing.map((m) => `"${m}"`).join(', ')} without a default`
          : 'the defaults of its schema do not validate against it';
      const fix =
        missing.length > 0
          ? `give ${missing.map((m) => `"${m}"`).join(', ')} a default (what the widget should show)`
          : 'make the defaults valid params';
      return {
        ok: false,
        why:
          `${capability.name}: ${cause}, so its widget has no params to be polled with and shows no data ` +
          `(the app says the provider has not said what it shows by default); ${fix}`,
      };
    }),
    'every state widget can be polled with its schema defaults',
    'no state capability is placed on a surface',
  );
  return { ...outcome, warning: true };
}

/** The surface checks of the documentation dimension (docs/conformance.md). */
export function componentChecks(capabilities: CapabilityDescriptor[]): CheckOutcome[] {
  const fits = componentFits(capabilities);
  return [componentsRender(fits), componentsFit(fits), surfaceFields(capabilities), widgetParamsCheck(capabilities)];
}
