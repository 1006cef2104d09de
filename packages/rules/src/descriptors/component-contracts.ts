/**
 * The data contracts of the surface components (docs/components.md): which
 * fields of a capability's data each component reads, whether the data fits a
 * component, and how a field is labelled and formatted from the descriptor's
 * `surfaceGuidance.fields`. A plain contract file (no Nest, no Node, imports
 * only capability-descriptor.ts) shared by the browser (web/app/component-contracts.ts
 * re-exports it; widgets.tsx renders from it) and the rules (conformance checks
 * the examples against `fits`, so what a user sees is what the provider meant).
 * Pure functions, unit-tested in test/unit/component-contracts.spec.ts.
 * The data comes from provider runtimes: nothing about its shape is trusted.
 */
export type Json = Record<string, unknown>;

/** The field formats of `surfaceGuidance.fields.<name>.format` (the descriptor vocabulary). */
export { FIELD_FORMATS } from './capability-descriptor';
export type { FieldFormat } from './capability-descriptor';

/** A JSON object (not an array, not null): checked before reading fields of data nobody vouches for. */
function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** How one top-level field of the data is shown (`surfaceGuidance.fields.<name>` of the descriptor). */
export interface FieldSpec {
  label?: string;
  unit?: string;
  format?: string;
  hidden?: boolean;
}
export type FieldSpecs = Record<string, FieldSpec | undefined>;

export const RENDERED_COMPONENTS = [
  'stat_row',
  'sparkline',
  'ranked_list',
  'action_row',
  'progress_bar',
  'cta_banner',
  'meeting_prep',
] as const;

/** At most this many rows in a stat_row, items in a ranked_list, points in a sparkline. */
export const STAT_ROW_MAX = 8;
export const SPARKLINE_MAX_POINTS = 60;
/** Items of an array of scalars shown in a stat_row before "+N more". */
export const STAT_ARRAY_ITEMS = 3;

/** Names read for a series, a headline number, a progress value and its maximum, ranked items, texts. */
export const SERIES_KEYS = ['points', 'values', 'series', 'history', 'data'];
export const SERIES_ITEM_KEYS = ['value', 'y', 'v', 'count', 'amount'];
export const HEADLINE_KEYS = ['value', 'current', 'rate', 'price', 'available', 'total', 'count', 'score'];
export const PROGRESS_VALUE_KEYS = ['value', 'progress', 'percent', 'percentage', 'current', 'done', 'completed'];
export const PROGRESS_MAX_KEYS = ['max', 'total', 'target', 'goal', 'of'];
export const LIST_KEYS = ['items', 'ranking', 'entries', 'list', 'results'];
export const MEETING_KEYS = ['startsAt', 'starts_at', 'start', 'time', 'when', 'attendees', 'participants', 'people', 'agenda'];
export const BANNER_KEYS = ['title', 'headline', 'heading', 'message', 'body', 'text', 'description'];

export function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isScalar(value: unknown): boolean {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

export function pick(data: Json, keys: string[]): unknown {
  for (const key of keys) if (key in data && data[key] !== null && data[key] !== undefined) return data[key];
  return undefined;
}

/** `availableBalance` / `next_meeting` → "Available balance" / "Next meeting". */
export function humanise(key: string): string {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_-]+/g, ' ')
    .trim()
    .toLowerCase();
  return words ? words[0].toUpperCase() + words.slice(1) : key;
}

/** Any value as short text: numbers localised, objects summarised, long text cut. */
export function display(value: unknown): string {
  if (value === null || value === undefined) return '—';
  if (isNumber(value)) return value.toLocaleString(undefined, { maximumFractionDigits: 4 });
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (typeof value === 'string') return value.length > 200 ? `${value.slice(0, 199)}…` : value;
  if (Array.isArray(value)) return value.length === 0 ? '—' : value.slice(0, 5).map(display).join(', ') + (value.length > 5 ? '…' : '');
  try {
    const text = JSON.stringify(value);
    return text.length > 200 ? `${text.slice(0, 199)}…` : text;
  } catch {
    return '—';
  }
}

/** A field spec read defensively (the API answers it, but a stale client may meet newer formats). */
export function specOf(fields: unknown, key: string): FieldSpec {
  if (!isObject(fields) || !Object.prototype.hasOwnProperty.call(fields, key)) return {};
  const raw = fields[key];
  if (!isObject(raw)) return {};
  const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v : undefined);
  return { label: text(raw.label), unit: text(raw.unit), format: text(raw.format), hidden: raw.hidden === true };
}

export function labelOf(key: string, spec: FieldSpec): string {
  return spec.label ?? humanise(key);
}

/**
 * One value as the descriptor asks: `number` (localised), `integer`,
 * `percent` (a ratio: 0.25 → "25%"), `currency` (unit = ISO 4217 code),
 * `date`/`datetime` (ISO string or epoch ms), `text`; a unit that is not a
 * currency code follows the value after a space. Unknown formats and values
 * that do not fit the format fall back to `display` (plus the unit).
 */
export function formatValue(value: unknown, spec: FieldSpec = {}, locale?: string): string {
  const unit = spec.unit ? ` ${spec.unit}` : '';
  if (value === null || value === undefined) return '—';
  switch (spec.format) {
    case 'integer':
      if (isNumber(value)) return `${Math.round(value).toLocaleString(locale)}${unit}`;
      break;
    case 'percent':
      if (isNumber(value)) return `${(value * 100).toLocaleString(locale, { maximumFractionDigits: 1 })}%`;
      break;
    case 'currency':
      if (isNumber(value) && spec.unit && /^[A-Z]{3}$/.test(spec.unit)) {
        try {
          return value.toLocaleString(locale, { style: 'currency', currency: spec.unit });
        } catch {
          break;
        }
      }
      break;
    case 'date':
    case 'datetime': {
      const date = typeof value === 'string' || isNumber(value) ? new Date(value) : null;
      if (date && !Number.isNaN(date.getTime()))
        return spec.format === 'date' ? date.toLocaleDateString(locale, { timeZone: 'UTC' }) : date.toLocaleString(locale);
      break;
    }
    case 'text':
      return `${display(typeof value === 'string' ? value : display(value))}${unit}`;
    default:
      if (isNumber(value)) return `${value.toLocaleString(locale, { maximumFractionDigits: 4 })}${unit}`;
  }
  return `${display(value)}${unit}`;
}

/** An array in a stat_row: the first few scalars and how many more, or a count of entries. */
export function summariseArray(values: unknown[], spec: FieldSpec = {}, locale?: string): string {
  if (values.length === 0) return 'None';
  if (values.every(isScalar)) {
    const shown = values.slice(0, STAT_ARRAY_ITEMS).map((v) => formatValue(v, { ...spec, unit: undefined }, locale));
    const more = values.length - STAT_ARRAY_ITEMS;
    return `${shown.join(', ')}${more > 0 ? ` +${more} more` : ''}${spec.unit ? ` ${spec.unit}` : ''}`;
  }
  return `${values.length} ${values.length === 1 ? 'entry' : 'entries'}`;
}

/**
 * The rows of a stat_row: a `stats: [{label|name, value, unit?}]` list as
 * given; else the data's top-level fields, arrays summarised, nested objects
 * left out, labelled/formatted by `fields`. When the descriptor names fields
 * present in the data, only those (not hidden) are shown; else every field.
 * Always in the data's order. At most STAT_ROW_MAX rows.
 */
export function statRows(data: unknown, fields?: unknown, locale?: string): Array<{ label: string; value: string }> {
  if (isObject(data) && Array.isArray(data.stats)) {
    return data.stats
      .filter(isObject)
      .map((stat) => {
        const name = typeof stat.label === 'string' ? stat.label : typeof stat.name === 'string' ? stat.name : '—';
        const unit = typeof stat.unit === 'string' && stat.unit.length <= 16 ? stat.unit : undefined;
        return { label: name, value: formatValue(stat.value, { unit }, locale) };
      })
      .slice(0, STAT_ROW_MAX);
  }
  if (!isObject(data)) return data === null || data === undefined ? [] : [{ label: 'Value', value: formatValue(data, {}, locale) }];
  // Named fields in the data's order: the stored descriptor (PostgreSQL jsonb) does not keep the order of its keys.
  const named = isObject(fields) ? Object.keys(data).filter((key) => Object.prototype.hasOwnProperty.call(fields, key)) : [];
  const keys = named.length > 0 ? named : Object.keys(data);
  const rows: Array<{ label: string; value: string }> = [];
  for (const key of keys) {
    const spec = specOf(fields, key);
    if (spec.hidden) continue;
    const value = data[key];
    if (Array.isArray(value)) rows.push({ label: labelOf(key, spec), value: summariseArray(value, spec, locale) });
    else if (isScalar(value)) rows.push({ label: labelOf(key, spec), value: formatValue(value, spec, locale) });
  }
  return rows.slice(0, STAT_ROW_MAX);
}

/** A numeric series: an array of numbers (or of objects with a value) under a usual name, else the first such array. */
export function seriesOf(data: unknown): { key: string | null; values: number[] } {
  const fromArray = (value: unknown): number[] | null => {
    if (!Array.isArray(value)) return null;
    const numbers = value
      .map((item) => (isNumber(item) ? item : isObject(item) ? pick(item, SERIES_ITEM_KEYS) : undefined))
      .filter(isNumber);
    return numbers.length >= 2 ? numbers.slice(-SPARKLINE_MAX_POINTS) : null;
  };
  if (Array.isArray(data)) return { key: null, values: fromArray(data) ?? [] };
  if (!isObject(data)) return { key: null, values: [] };
  for (const key of SERIES_KEYS) {
    const found = fromArray(data[key]);
    if (found) return { key, values: found };
  }
  for (const [key, value] of Object.entries(data)) {
    const found = fromArray(value);
    if (found) return { key, values: found };
  }
  return { key: null, values: [] };
}

/** The headline number of data: a usual name first, else the first number. */
export function headlineOf(data: unknown): { key: string; value: number } | null {
  if (isNumber(data)) return { key: 'value', value: data };
  if (!isObject(data)) return null;
  for (const key of HEADLINE_KEYS) if (isNumber(data[key])) return { key, value: data[key] };
  const entry = Object.entries(data).find(([, value]) => isNumber(value));
  return entry ? { key: entry[0], value: entry[1] as number } : null;
}

/** A progress reading: a value and a maximum, both given, or a ratio (0..1) with no maximum. */
export function progressOf(data: unknown): { value: number; max: number } | null {
  if (isNumber(data)) return data >= 0 && data <= 1 ? { value: data, max: 1 } : null;
  if (!isObject(data)) return null;
  const value = pick(data, PROGRESS_VALUE_KEYS);
  const max = pick(data, PROGRESS_MAX_KEYS);
  if (!isNumber(value)) return null;
  if (isNumber(max) && max > 0) return { value, max };
  if (value >= 0 && value <= 1) return { value, max: 1 };
  if (('percent' in data || 'percentage' in data) && value >= 0 && value <= 100) return { value, max: 100 };
  return null;
}

/** The items of a ranked_list: the data itself when an array, else a list under a usual name, else the first array. */
export function listOf(data: unknown): unknown[] {
  if (Array.isArray(data)) return data;
  if (!isObject(data)) return [];
  const named = pick(data, LIST_KEYS);
  if (Array.isArray(named)) return named;
  return (Object.values(data).find(Array.isArray) as unknown[] | undefined) ?? [];
}

/**
 * What each component reads, in words built from the names above: the
 * "reads" of docs/components.md, and the remediation a conformance check
 * gives when a provider's example data does not fit a preferred component.
 */
export const COMPONENT_READS: Record<string, string> = {
  stat_row: 'a `stats` list of {label, value} or at least one top-level field that is a number, text, boolean or array',
  sparkline: `a numeric series of 2 or more points: an array of numbers (or of objects with ${SERIES_ITEM_KEYS.join('/')}) under ${SERIES_KEYS.join(', ')}, else the first such array`,
  progress_bar: `a number under ${PROGRESS_VALUE_KEYS.join(', ')} with a maximum under ${PROGRESS_MAX_KEYS.join(', ')}, or a ratio from 0 to 1`,
  ranked_list: `a non-empty list: the data itself when an array, else an array under ${LIST_KEYS.join(', ')}, else the first array`,
  meeting_prep: `a start, attendees or agenda under ${MEETING_KEYS.join(', ')}`,
  cta_banner: `a text under ${BANNER_KEYS.join(', ')}`,
  action_row: 'no data: it is the input form of an action, built from its schema',
};

/** Components that show the capability's data; `action_row` is the action's input form and reads none. */
export const DATA_COMPONENTS = RENDERED_COMPONENTS.filter((c) => c !== 'action_row');

/** Whether data gives a component what it reads (docs/components.md, "Fits when"). */
export function fits(component: string, data: unknown): boolean {
  if (data === null || data === undefined) return false;
  switch (component) {
    case 'stat_row':
      return statRows(data).length > 0;
    case 'sparkline':
      return seriesOf(data).values.length >= 2;
    case 'progress_bar':
      return progressOf(data) !== null;
    case 'ranked_list':
      return listOf(data).length > 0;
    case 'meeting_prep':
      return isObject(data) && pick(data, MEETING_KEYS) !== undefined;
    case 'cta_banner':
      return isObject(data) && typeof pick(data, BANNER_KEYS) === 'string';
    default:
      return false;
  }
}

/**
 * `fits`, widened for a widget whose series builds up from live events
 * (`liveSeries`, realtime): a sparkline then fits any data, one point at a time.
 */
export function fitsWidget(component: string, data: unknown, options: { liveSeries?: boolean } = {}): boolean {
  return fits(component, data) || (component === 'sparkline' && options.liveSeries === true && data != null);
}

/**
 * The components a widget renders, in the provider's order: every preferred
 * one (the renderer supports) that fits the data; when none fits, the first
 * preferred alone (it says what is missing). `liveSeries`: a series builds up
 * from live events (realtime), so a sparkline fits a single headline number.
 * `action_row` is the action form, rendered by the widget itself.
 */
export function componentsToRender(preferred: unknown, fallback: string, data: unknown, options: { liveSeries?: boolean } = {}): string[] {
  const list = (Array.isArray(preferred) ? preferred : [])
    .filter((c): c is string => typeof c === 'string' && (RENDERED_COMPONENTS as readonly string[]).includes(c))
    .filter((c, i, all) => all.indexOf(c) === i);
  const candidates = list.length > 0 ? list : [fallback];
  const fitting = candidates.filter((c) => fitsWidget(c, data, options));
  return fitting.length > 0 ? fitting : [candidates[0]];
}
