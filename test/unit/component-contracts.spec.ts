import * as webContracts from '../../web/app/component-contracts';
import {
  COMPONENT_READS,
  componentsToRender,
  DATA_COMPONENTS,
  fits,
  fitsWidget,
  formatValue,
  progressOf,
  seriesOf,
  statRows,
  summariseArray,
} from '@soul-service/rules';

/** The surface components' data contracts (docs/components.md): what fits, what is shown, how it is labelled. */
describe('component contracts', () => {
  describe('componentsToRender', () => {
    it('renders every preferred component that fits, in the provider’s order', () => {
      const data = { open: 12, history: [3, 5, 8, 12] };
      expect(componentsToRender(['stat_row', 'sparkline'], 'stat_row', data)).toEqual(['stat_row', 'sparkline']);
      expect(componentsToRender(['sparkline', 'stat_row'], 'sparkline', data)).toEqual(['sparkline', 'stat_row']);
    });

    it('leaves out a sparkline without a numeric series, and a progress bar without a maximum', () => {
      expect(componentsToRender(['stat_row', 'sparkline', 'progress_bar'], 'stat_row', { available: 1520.75, currency: 'EUR' })).toEqual([
        'stat_row',
      ]);
      expect(componentsToRender(['progress_bar', 'stat_row'], 'progress_bar', { done: 3, total: 4 })).toEqual(['progress_bar', 'stat_row']);
    });

    it('falls back to the first preferred one when none fits (it says what is missing)', () => {
      expect(componentsToRender(['ranked_list', 'sparkline'], 'ranked_list', { items: [] })).toEqual(['ranked_list']);
    });

    it('uses the single `component` of older answers, ignores unknown and duplicate names', () => {
      expect(componentsToRender(undefined, 'stat_row', { a: 1 })).toEqual(['stat_row']);
      expect(componentsToRender(['<script>', 'stat_row', 'stat_row', 42], 'stat_row', { a: 1 })).toEqual(['stat_row']);
    });

    it('lets a live series (realtime) feed a sparkline from a single number', () => {
      expect(componentsToRender(['sparkline', 'stat_row'], 'sparkline', { rate: 1.08 }, { liveSeries: true })).toEqual([
        'sparkline',
        'stat_row',
      ]);
      expect(componentsToRender(['sparkline', 'stat_row'], 'sparkline', { rate: 1.08 })).toEqual(['stat_row']);
    });
  });

  describe('fits', () => {
    it.each([
      ['stat_row', { a: 1 }, true],
      ['stat_row', { nested: { a: 1 } }, false],
      ['sparkline', { points: [{ value: 1 }, { value: 2 }] }, true],
      ['sparkline', [1], false],
      ['progress_bar', 0.4, true],
      ['progress_bar', { value: 40 }, false],
      ['progress_bar', { percent: 40 }, true],
      ['ranked_list', [{ name: 'x' }], true],
      ['meeting_prep', { startsAt: '2026-11-24T09:30:00Z' }, true],
      ['meeting_prep', { a: 1 }, false],
      ['cta_banner', { headline: 'Save' }, true],
      ['action_row', { a: 1 }, false],
      ['stat_row', null, false],
    ])('%s fits %j: %s', (component, data, expected) => {
      expect(fits(component, data)).toBe(expected);
    });
  });

  describe('one contract for the server and the browser', () => {
    it('is what the pages import (web/app re-exports the contract file)', () => {
      expect(webContracts.fits).toBe(fits);
      expect(webContracts.componentsToRender).toBe(componentsToRender);
    });

    it('says what every data component reads, and counts action_row (the action form) as reading none', () => {
      expect(DATA_COMPONENTS).not.toContain('action_row');
      for (const component of DATA_COMPONENTS) expect(COMPONENT_READS[component]).toEqual(expect.any(String));
      expect(COMPONENT_READS.sparkline).toContain('under points, values, series, history, data');
    });

    it('widens fits for a live series: a sparkline fits a single value while events build it up', () => {
      expect(fits('sparkline', { rate: 1.08 })).toBe(false);
      expect(fitsWidget('sparkline', { rate: 1.08 }, { liveSeries: true })).toBe(true);
      expect(fitsWidget('stat_row', null, { liveSeries: true })).toBe(false);
      expect(fitsWidget('progress_bar', { rate: 1.08 }, { liveSeries: true })).toBe(false);
    });
  });

  describe('statRows', () => {
    it('labels every scalar field from its key and summarises arrays instead of dropping them', () => {
      expect(
        statRows(
          { availableBalance: 10, tags: ['a', 'b', 'c', 'd', 'e'], items: [{ id: 1 }, { id: 2 }], nested: { x: 1 } },
          undefined,
          'en-US',
        ),
      ).toEqual([
        { label: 'Available balance', value: '10' },
        { label: 'Tags', value: 'a, b, c +2 more' },
        { label: 'Items', value: '2 entries' },
      ]);
    });

    it('shows only the fields the descriptor names, in the data’s order, with its labels, units and formats', () => {
      const fields = {
        ratio: { label: 'Resolved', format: 'percent' },
        open: { label: 'Open now', unit: 'tickets', format: 'integer' },
        queue: { hidden: true },
        missing: { label: 'Not in the data' },
      };
      expect(statRows({ open: 12.4, queue: 'support', ratio: 0.825, other: 'left out' }, fields, 'en-US')).toEqual([
        { label: 'Open now', value: '12 tickets' },
        { label: 'Resolved', value: '82.5%' },
      ]);
    });

    it('matches field names as own keys only (a data key such as `constructor` is not “named”)', () => {
      expect(statRows({ constructor: 'x', toString: 1, open: 2 }, { open: { label: 'Open' } }, 'en-US')).toEqual([
        { label: 'Open', value: '2' },
      ]);
    });

    it('reads a `stats` list as given, and bounds the rows', () => {
      expect(
        statRows({ stats: [{ label: 'Speed', value: 3, unit: 'ms' }, { name: 'Load', value: 0.5 }, 'junk'] }, undefined, 'en-US'),
      ).toEqual([
        { label: 'Speed', value: '3 ms' },
        { label: 'Load', value: '0.5' },
      ]);
      const many = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`f${i}`, i]));
      expect(statRows(many)).toHaveLength(8);
    });
  });

  describe('formatValue', () => {
    it.each([
      [1234.5678, {}, '1,234.5678'],
      [1234.5, { unit: 'kg' }, '1,234.5 kg'],
      [12.6, { format: 'integer', unit: 'tickets' }, '13 tickets'],
      [0.25, { format: 'percent' }, '25%'],
      [1520.75, { format: 'currency', unit: 'EUR' }, '€1,520.75'],
      [1520.75, { format: 'currency', unit: 'euros' }, '1,520.75 euros'],
      ['2026-11-24T09:30:00Z', { format: 'date' }, '11/24/2026'],
      ['not a date', { format: 'date' }, 'not a date'],
      ['<b>x</b>', { format: 'text' }, '<b>x</b>'],
      [null, { unit: 'ms' }, '—'],
      ['12', { format: 'percent' }, '12'],
      [true, {}, 'Yes'],
    ])('%j with %j is %j', (value, spec, expected) => {
      expect(formatValue(value, spec, 'en-US')).toBe(expected);
    });
  });

  it('summarises arrays: first items of scalars, a count of objects', () => {
    expect(summariseArray([], {}, 'en-US')).toBe('None');
    expect(summariseArray([1, 2], { unit: 'ms' }, 'en-US')).toBe('1, 2 ms');
    expect(summariseArray([{ a: 1 }], {}, 'en-US')).toBe('1 entry');
  });

  it('finds a series under a usual name, else the first numeric array, bounded to 60 points', () => {
    expect(seriesOf({ label: 'x', history: [1, 2, 3] })).toEqual({ key: 'history', values: [1, 2, 3] });
    expect(seriesOf({ latency: [{ y: 1 }, { y: 2 }] })).toEqual({ key: 'latency', values: [1, 2] });
    expect(seriesOf({ values: Array.from({ length: 100 }, (_, i) => i) }).values).toHaveLength(60);
    expect(seriesOf({ a: 1 })).toEqual({ key: null, values: [] });
  });

  it('reads progress only with a maximum or as a ratio', () => {
    expect(progressOf({ current: 750, target: 1000 })).toEqual({ value: 750, max: 1000 });
    expect(progressOf(0.4)).toEqual({ value: 0.4, max: 1 });
    expect(progressOf({ value: 40 })).toBeNull();
  });
});
