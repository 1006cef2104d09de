import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  addCapability,
  changeMode,
  exampleData,
  exampleFieldNames,
  fieldWithin,
  freeName,
  fullSchema,
  messagesAt,
  newCapability,
  parseDocument,
  pathText,
  placementsOf,
  preferredComponentsOf,
  previewModel,
  removeCapability,
  requiredWithoutDefault,
  setIn,
  toggled,
  unclaimedIssues,
  withoutRuntimeUrl,
} from '../../web/console/capability-editor/model';

/** The console's capability editor (issue 24): the JSON is the source of truth, the form writes into it. */
describe('capability editor model', () => {
  describe('parseDocument', () => {
    it('reads an object and says why other text is not a descriptor', () => {
      expect(parseDocument('{"name":"A"}')).toEqual({ value: { name: 'A' } });
      expect(parseDocument('{ "name": ').error).toMatch(/JSON/);
      expect(parseDocument('[1]').error).toBe('it must be a JSON object ({ … })');
      expect(parseDocument('null').error).toBe('it must be a JSON object ({ … })');
    });
  });

  describe('setIn', () => {
    it('sets a member in place, keeps the members it does not know, and does not change the original', () => {
      const doc = { name: 'A', nmae: 'typo', capabilities: [{ type: 'state', name: 'balance', colour: 'red' }] };
      const next = setIn(doc, ['capabilities', 0, 'name'], 'saldo') as typeof doc;
      expect(next).toEqual({ name: 'A', nmae: 'typo', capabilities: [{ type: 'state', name: 'saldo', colour: 'red' }] });
      expect(Object.keys(next.capabilities[0])).toEqual(['type', 'name', 'colour']);
      expect(doc.capabilities[0].name).toBe('balance');
    });

    it('creates missing parents (an array for a number) and removes a member set to undefined', () => {
      expect(setIn({}, ['examples', 0, 'response'], { a: 1 })).toEqual({ examples: [{ response: { a: 1 } }] });
      expect(setIn({ a: 1, b: { c: 2 } }, ['b', 'c'], undefined)).toEqual({ a: 1, b: {} });
      expect(setIn({ list: [1, 2, 3] }, ['list', 1], undefined)).toEqual({ list: [1, 3] });
    });
  });

  describe('errors by field', () => {
    const issues = [
      { field: 'name', message: 'name is required' },
      { field: 'capabilities[0].refreshInterval', message: 'must be at least 1' },
      { field: 'capabilities[0].schema.properties.account', message: 'property without type' },
      { field: 'capabilities[0].colour', message: '`capabilities[0].colour` is not a known field' },
      { field: 'capabilities[10].name', message: 'taken' },
    ];

    it('names paths as the service does', () => {
      expect(pathText(['capabilities', 0, 'surfaceGuidance', 'fields', 'open', 'format'])).toBe(
        'capabilities[0].surfaceGuidance.fields.open.format',
      );
      expect(pathText(['name'])).toBe('name');
    });

    it('gives a field the errors of its path and inside it, not of a sibling with a longer index', () => {
      expect(messagesAt(issues, ['capabilities', 0, 'schema'])).toEqual(['property without type']);
      expect(messagesAt(issues, ['capabilities', 0, 'refreshInterval'])).toEqual(['must be at least 1']);
      expect(messagesAt(issues, ['capabilities', 1])).toEqual([]);
      expect(fieldWithin('capabilities[10].name', 'capabilities[1]')).toBe(false);
      expect(fieldWithin('capabilities[1].name', 'capabilities[1]')).toBe(true);
    });

    it('lists the errors of a capability that no field of the form shows', () => {
      const shown = [
        ['capabilities', 0, 'schema'],
        ['capabilities', 0, 'refreshInterval'],
      ];
      expect(unclaimedIssues(issues, ['capabilities', 0], shown)).toEqual([issues[3]]);
    });
  });

  describe('capabilities', () => {
    it('adds a capability of a mode with a free name, the mode’s defaults and an empty example', () => {
      const doc = addCapability({ capabilities: [{ type: 'state', name: 'state' }] }, 'state');
      const added = (doc.capabilities as Array<Record<string, unknown>>)[1];
      expect(added).toMatchObject({
        type: 'state',
        name: 'state_2',
        refreshInterval: 300,
        schema: { type: 'object', properties: {} },
        surfaceGuidance: {
          intent: 'ambient_context',
          placement: ['home_widgets'],
          preferredComponents: ['stat_row', 'sparkline', 'progress_bar'],
        },
        examples: [{ params: {}, response: {} }],
      });
      expect(newCapability('webhook', [])).toMatchObject({ examples: [{ event: 'webhook.updated', data: {} }] });
      expect(newCapability('realtime', []).examples).toEqual([{ data: {} }]);
      expect(freeName('action', ['action', 'action_2'])).toBe('action_3');
      expect(removeCapability(doc, 0).capabilities).toEqual([added]);
    });

    it('changes the mode: drops the other modes’ members and renames the examples’ members', () => {
      const state = { type: 'state', name: 'x', refreshInterval: 60, examples: [{ params: { a: 1 }, response: { b: 2 } }] };
      expect(changeMode(state, 'action')).toEqual({ type: 'action', name: 'x', examples: [{ input: { a: 1 }, response: { b: 2 } }] });
      expect(changeMode(state, 'realtime')).toEqual({ type: 'realtime', name: 'x', examples: [{ data: { b: 2 } }] });
      expect(changeMode({ type: 'webhook', events: [], examples: [{ event: 'e', data: { b: 2 } }] }, 'state')).toEqual({
        type: 'state',
        examples: [{ response: { b: 2 } }],
        refreshInterval: 300,
      });
    });

    it('reads the components and placements /app would use: listed, else the mode’s defaults; an empty list picks the typical one', () => {
      expect(preferredComponentsOf({ type: 'state' })).toEqual(['stat_row', 'sparkline', 'progress_bar']);
      expect(
        preferredComponentsOf({ type: 'state', surfaceGuidance: { preferredComponents: ['sparkline', 'bogus', 'sparkline'] } }),
      ).toEqual(['sparkline']);
      expect(preferredComponentsOf({ type: 'history', surfaceGuidance: { preferredComponents: [] } })).toEqual(['ranked_list']);
      expect(preferredComponentsOf({ type: 'state', surfaceGuidance: { components: ['stat_row'] } })).toEqual(['stat_row']);
      expect(placementsOf({ type: 'webhook' })).toEqual(['daily_brief']);
      expect(placementsOf({ type: 'state', surfaceGuidance: { placement: [] } })).toEqual([]);
      expect(toggled(['stat_row'], 'sparkline', true)).toEqual(['stat_row', 'sparkline']);
      expect(toggled(['stat_row', 'sparkline'], 'stat_row', false)).toEqual(['sparkline']);
    });
  });

  describe('preview', () => {
    const balance = {
      type: 'state',
      name: 'queue_stats',
      description: 'Open tickets now.',
      schema: { type: 'object', properties: { queue: { type: 'string', default: 'support' } } },
      surfaceGuidance: {
        preferredComponents: ['stat_row', 'sparkline'],
        title: 'Open tickets',
        fields: { open: { label: 'Open now', unit: 'tickets' } },
      },
      examples: [{ params: { queue: 'support' }, response: { open: 12, history: [9, 11, 14, 12] } }],
    };

    it('is the surface component /app would get, with the first example’s response as data', () => {
      expect(previewModel(balance, 'Acme Support')).toEqual({
        package: { id: 'preview', name: 'Acme Support' },
        capability: { name: 'queue_stats', mode: 'state', description: 'Open tickets now.' },
        intent: 'ambient_context',
        component: 'stat_row',
        components: ['stat_row', 'sparkline'],
        title: 'Open tickets',
        fields: { open: { label: 'Open now', unit: 'tickets' } },
        params: {},
        data: { open: 12, history: [9, 11, 14, 12] },
        fetchedAt: null,
        stale: false,
      });
    });

    it('reads each mode’s example member, and gives an action its full input schema and example input', () => {
      expect(exampleData({ type: 'realtime', examples: [{ data: { rate: 1.08 } }] })).toEqual({ rate: 1.08 });
      expect(exampleData({ type: 'history', examples: [{ params: {}, response: { name: 'A', amount: 3 } }] })).toEqual([
        { name: 'A', amount: 3 },
      ]);
      expect(exampleData({ type: 'state' })).toBeUndefined();
      expect(previewModel({ type: 'state' }, '').data).toBeNull();
      expect(previewModel({ type: 'state' }, '').package.name).toBe('Your package');
      const action = previewModel(
        { type: 'action', name: 'transfer', schema: { amount: { type: 'number', required: true } }, examples: [{ input: { amount: 5 } }] },
        'Bank',
      );
      expect(action.input).toEqual({
        schema: { type: 'object', properties: { amount: { type: 'number' } }, required: ['amount'] },
        example: { amount: 5 },
      });
    });

    it('warns when a state widget would not be polled (a required param without a default)', () => {
      expect(
        requiredWithoutDefault({
          type: 'object',
          properties: { a: { type: 'string' }, b: { type: 'string', default: 'x' } },
          required: ['a', 'b'],
        }),
      ).toEqual(['a']);
      expect(requiredWithoutDefault({ account: { type: 'string', required: true } })).toEqual(['account']);
      expect(fullSchema(undefined)).toEqual({ type: 'object', properties: {} });
    });

    it('offers the example’s top-level fields not yet described', () => {
      expect(exampleFieldNames(balance)).toEqual(['history']);
    });
  });

  it('drops from the stored capabilities the runtime the version had, and keeps another', () => {
    const stored = [
      { name: 'a', runtimeUrl: 'https://one.example' },
      { name: 'b', runtimeUrl: 'https://two.example' },
    ];
    expect(withoutRuntimeUrl(stored, 'https://one.example')).toEqual([{ name: 'a' }, { name: 'b', runtimeUrl: 'https://two.example' }]);
  });

  /**
   * The preview must look as /app does: web/console/capability-editor/widget-preview.css holds app.css's widget rules
   * scoped to `.widget-preview`, unchanged. On a failure, the message shows the rules to paste.
   */
  it('keeps the preview’s scoped widget styles equal to /app’s', () => {
    const root = join(__dirname, '../..');
    const app = widgetRules(readFileSync(join(root, 'web/app/app.css'), 'utf8')).map(({ selectors, body }) => ({
      selectors: selectors.map((s) => `.widget-preview ${s}`),
      body,
    }));
    const preview = cssRules(readFileSync(join(root, 'web/console/capability-editor/widget-preview.css'), 'utf8'));
    expect(app.length).toBeGreaterThan(10);
    expect(preview).toEqual(app);
  });
});

const WIDGET_CLASSES = [
  'widget',
  'widget-source',
  'widget-meta',
  'stat-row',
  'stat',
  'sparkline',
  'sparkline-latest',
  'ranked-list',
  'ranked-value',
  'progress-track',
  'progress-fill',
  'cta-banner',
  'cta-headline',
  'meeting-title',
  'result-list',
  'muted',
];

/** Top-level rules of a stylesheet (at-rules left out), selectors and declarations trimmed. */
function cssRules(css: string): Array<{ selectors: string[]; body: string[] }> {
  const text = css.replace(/\/\*[\s\S]*?\*\//g, '');
  const rules: Array<{ selectors: string[]; body: string[] }> = [];
  let depth = 0;
  let start = 0;
  let selector = '';
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] === '{') {
      if (depth === 0) {
        selector = text.slice(start, i).trim();
        start = i + 1;
      }
      depth += 1;
    } else if (text[i] === '}') {
      depth -= 1;
      if (depth === 0) {
        if (!selector.startsWith('@'))
          rules.push({
            selectors: selector.split(',').map((s) => s.trim()),
            body: text
              .slice(start, i)
              .split(';')
              .map((d) => d.trim())
              .filter(Boolean),
          });
        start = i + 1;
      }
    }
  }
  return rules;
}

/** The rules of app.css about the widget (every selector starts with one of its classes). */
function widgetRules(css: string) {
  return cssRules(css).filter((rule) => rule.selectors.every((s) => WIDGET_CLASSES.includes(/^\.([a-z-]+)/.exec(s)?.[1] ?? '')));
}
