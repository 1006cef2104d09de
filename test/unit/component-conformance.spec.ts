import {
  CapabilityDescriptor,
  CheckOutcome,
  componentChecks,
  DIMENSION_FLOOR,
  DIMENSION_MAX,
  documentationChecks,
  exampleWidgetData,
  requiredWithoutDefault,
  scoreDimension,
  widgetParams,
} from '@soul-service/rules';
import { normaliseCapabilities } from '../../src/modules/descriptors/descriptor-normalizer';
import { goodPackageCapabilities } from '../support/provider-runtime';

const good = () => normaliseCapabilities(goodPackageCapabilities());
const described = (type: string, description: string, extra: Record<string, unknown> = {}) => ({ type, description, ...extra });

/** A state capability as a provider writes it, with its preferred components, example data and params schema. */
function state(
  name: string,
  components: string[],
  response: unknown,
  options: { schema?: Record<string, unknown>; fields?: Record<string, unknown>; placement?: string[] } = {},
): CapabilityDescriptor {
  const [capability] = normaliseCapabilities([
    {
      type: 'state',
      name,
      description: 'A state capability that conformance checks against its examples.',
      refreshInterval: 60,
      schema: options.schema ?? { type: 'object', properties: {} },
      responseSchema: {
        type: 'object',
        properties: {
          available: described('number', 'Money available.'),
          currency: described('string', 'Currency code.'),
          history: described('array', 'Balances of the last days.', { items: { type: 'number' } }),
        },
      },
      surfaceGuidance: {
        intent: 'ambient_context',
        placement: options.placement ?? ['home_widgets'],
        preferredComponents: components,
        ...(options.fields ? { fields: options.fields } : {}),
      },
      examples: [{ params: {}, response }],
    },
  ]);
  return capability;
}

const byId = (outcomes: CheckOutcome[], id: string) => {
  const found = outcomes.find((o) => o.id === id);
  if (!found) throw new Error(`no check ${id}`);
  return found;
};
const BALANCE = { available: 1520.75, currency: 'EUR' };

describe('component conformance (documentation dimension)', () => {
  it('passes the good package on every component check but warns that its balance widget cannot be polled', () => {
    const outcomes = componentChecks(good());
    expect(byId(outcomes, 'documentation.components_render')).toMatchObject({ fraction: 1, blocking: true });
    expect(byId(outcomes, 'documentation.components_fit')).toMatchObject({ fraction: 1, warning: true });
    expect(byId(outcomes, 'documentation.widget_params')).toMatchObject({ fraction: 0, warning: true });
    expect(byId(outcomes, 'documentation.widget_params').detail).toBe(
      'balance: its schema requires "account" without a default, so its widget has no params to be polled with and shows no data ' +
        '(the app says the provider has not said what it shows by default); give "account" a default (what the widget should show)',
    );
    // Warnings cost nothing: the good package keeps every documentation point.
    expect(scoreDimension(DIMENSION_MAX.documentation, documentationChecks(good())).score).toBe(DIMENSION_MAX.documentation);
  });

  it('blocks a capability none of whose preferred components fits its example, naming the component and what it reads', () => {
    const capability = state('accounts_ranked', ['ranked_list'], BALANCE);
    const render = byId(componentChecks([capability]), 'documentation.components_render');
    expect(render).toMatchObject({ fraction: 0, blocking: true });
    expect(render.detail).toContain('accounts_ranked: none of its preferred components (ranked_list) fits its example response');
    expect(render.detail).toContain(
      'ranked_list reads a non-empty list: the data itself when an array, else an array under items, ranking',
    );
    // The documentation dimension drops below the floor, whatever the other checks earned.
    const dimension = scoreDimension(DIMENSION_MAX.documentation, documentationChecks([capability]));
    expect(dimension.score).toBeLessThan(DIMENSION_FLOOR);
    // Reported once: the warning check does not repeat a capability that renders none of its components.
    expect(byId(componentChecks([capability]), 'documentation.components_fit').fraction).toBe(1);
  });

  it('warns (no points lost) about a preferred component the example does not fit while another one fits', () => {
    const capability = state('balance_chart', ['stat_row', 'sparkline'], BALANCE);
    const outcomes = componentChecks([capability]);
    expect(byId(outcomes, 'documentation.components_render').fraction).toBe(1);
    const fit = byId(outcomes, 'documentation.components_fit');
    expect(fit).toMatchObject({ fraction: 0.5, warning: true });
    expect(fit.detail).toContain('balance_chart prefers sparkline, but its example response does not fit it, so the widget leaves it out');
    expect(fit.detail).toContain('(it shows stat_row); sparkline reads a numeric series of 2 or more points');
    expect(fit.detail).toContain('or drop sparkline from preferredComponents');
    const dimension = scoreDimension(DIMENSION_MAX.documentation, documentationChecks([capability]));
    expect(dimension.checks.find((c) => c.id === 'documentation.components_fit')).toMatchObject({
      passed: false,
      points: 0,
      max: 0,
      warning: true,
    });
    expect(dimension.score).toBe(DIMENSION_MAX.documentation);
  });

  it('passes once the example carries what the component reads', () => {
    const capability = state('balance_chart', ['stat_row', 'sparkline'], { ...BALANCE, history: [1400, 1480, 1520.75] });
    const outcomes = componentChecks([capability]);
    expect(byId(outcomes, 'documentation.components_fit')).toMatchObject({
      fraction: 1,
      detail: 'every preferred component fits the example data',
    });
  });

  it('judges a component against every example: one that fits is enough', () => {
    const [capability] = [state('balance_chart', ['sparkline'], BALANCE)];
    const withSeries = { ...capability, examples: [...capability.examples!, { params: {}, response: { history: [1, 2] } }] };
    expect(byId(componentChecks([withSeries]), 'documentation.components_render').fraction).toBe(1);
  });

  it('lets a realtime sparkline build from a single live number, as the widget does', () => {
    const ticker = good().find((c) => c.name === 'ticker')!;
    expect(ticker.surfaceGuidance.preferredComponents).toEqual(['sparkline', 'stat_row']);
    expect(exampleWidgetData(ticker)).toEqual([{ pair: 'EURUSD', rate: 1.0842 }]);
    const fits = byId(componentChecks([ticker]), 'documentation.components_fit');
    expect(fits.fraction).toBe(1);
    // Without a number, no live series: the sparkline is reported.
    const textOnly = { ...ticker, examples: [{ data: { pair: 'EURUSD' } }] };
    expect(byId(componentChecks([textOnly]), 'documentation.components_fit').detail).toContain('ticker prefers sparkline');
  });

  it('does not judge actions (their widget is the input form) nor history (its widget is not fed runtime data)', () => {
    const modes = good().filter((c) => c.type === 'action' || c.type === 'history');
    expect(modes.map((c) => exampleWidgetData(c))).toEqual([[], []]);
    expect(byId(componentChecks(modes), 'documentation.components_render')).toMatchObject({
      applicable: false,
      detail: 'not applicable: no state, realtime or webhook capability has example data',
    });
  });

  it('warns about surfaceGuidance.fields naming a field the data does not have', () => {
    const fields = { available: { label: 'Available', format: 'currency', unit: 'EUR' }, availble: { label: 'Typo' } };
    const fieldsCheck = byId(componentChecks([state('balance', ['stat_row'], BALANCE, { fields })]), 'documentation.surface_fields');
    expect(fieldsCheck).toMatchObject({ fraction: 0.5, warning: true });
    expect(fieldsCheck.detail).toContain(
      'balance: surfaceGuidance.fields names "availble", which is neither a property of its responseSchema nor a field of its example data',
    );
    expect(fieldsCheck.detail).toContain('(available, currency, history)');
    const named = byId(
      componentChecks([state('balance', ['stat_row'], BALANCE, { fields: { history: {} } })]),
      'documentation.surface_fields',
    );
    expect(named.fraction).toBe(1);
  });

  it('passes a state widget whose required params all have valid defaults, and says when defaults do not validate', () => {
    const schema = (account: Record<string, unknown>) => ({
      type: 'object',
      properties: { account: described('string', 'Which account.', { enum: ['checking', 'savings'], ...account }) },
      required: ['account'],
    });
    const withDefault = state('balance', ['stat_row'], BALANCE, { schema: schema({ default: 'checking' }) });
    expect(widgetParams(withDefault)).toEqual({ account: 'checking' });
    expect(byId(componentChecks([withDefault]), 'documentation.widget_params').fraction).toBe(1);

    const badDefault = state('balance', ['stat_row'], BALANCE, { schema: schema({ default: 'brokerage' }) });
    expect(widgetParams(badDefault)).toBeUndefined();
    expect(requiredWithoutDefault(badDefault)).toEqual([]);
    expect(byId(componentChecks([badDefault]), 'documentation.widget_params').detail).toContain(
      'balance: the defaults of its schema do not validate against it, so its widget has no params',
    );

    const noDefault = state('balance', ['stat_row'], BALANCE, { schema: schema({}) });
    expect(requiredWithoutDefault(noDefault)).toEqual(['account']);
    // Not on any surface: no widget, nothing to warn about.
    const unplaced = state('balance', ['stat_row'], BALANCE, { schema: schema({}), placement: [] });
    expect(byId(componentChecks([unplaced]), 'documentation.widget_params')).toMatchObject({ applicable: false });
  });
});
