import type { ComponentChildren } from 'preact';
import type { Schemas } from '../shared/api';
import { isObject } from '../shared/json';
import { formatDate } from '../shared/ui';
import { ActionForm } from './action-flow';

/**
 * Surface components (`GET /v1/surfaces/:placement`). Their data comes from
 * provider runtimes, so nothing about its shape is trusted: every value is
 * read defensively and rendered as text (never as HTML).
 */
export type SurfaceComponent = Omit<Schemas['SurfaceComponentDto'], 'data' | 'input'> & {
  data: unknown;
  input?: { schema?: unknown; example?: unknown };
};

type Json = Record<string, unknown>;

export function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
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

function pick(data: Json, keys: string[]): unknown {
  for (const key of keys) if (key in data && data[key] !== null && data[key] !== undefined) return data[key];
  return undefined;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value : isNumber(value) ? String(value) : null;
}

/** A numeric series from data: an array of numbers (or of objects with a value) under a usual name, or the first such array. */
export function seriesOf(data: unknown): number[] {
  const fromArray = (value: unknown): number[] | null => {
    if (!Array.isArray(value)) return null;
    const numbers = value
      .map((item) => (isNumber(item) ? item : isObject(item) ? pick(item, ['value', 'y', 'v', 'count', 'amount']) : undefined))
      .filter(isNumber);
    return numbers.length >= 2 ? numbers : null;
  };
  if (Array.isArray(data)) return fromArray(data) ?? [];
  if (!isObject(data)) return [];
  for (const key of ['points', 'values', 'series', 'history', 'data']) {
    const found = fromArray(data[key]);
    if (found) return found;
  }
  for (const value of Object.values(data)) {
    const found = fromArray(value);
    if (found) return found;
  }
  return [];
}

/** The headline number of data: a usual name first, else the first number. */
export function headlineOf(data: unknown): { key: string; value: number } | null {
  if (isNumber(data)) return { key: 'value', value: data };
  if (!isObject(data)) return null;
  for (const key of ['value', 'current', 'rate', 'price', 'available', 'total', 'count', 'score']) {
    if (isNumber(data[key])) return { key, value: data[key] };
  }
  const entry = Object.entries(data).find(([, value]) => isNumber(value));
  return entry ? { key: entry[0], value: entry[1] as number } : null;
}

function StatRow(props: { data: unknown }) {
  const { data } = props;
  let rows: Array<[string, string]> = [];
  if (isObject(data) && Array.isArray(data.stats)) {
    rows = (data.stats as unknown[]).filter(isObject).map((stat) => [text(stat.label) ?? text(stat.name) ?? '—', display(stat.value)]);
  } else if (isObject(data)) {
    rows = Object.entries(data)
      .filter(([, value]) => value === null || ['string', 'number', 'boolean'].includes(typeof value))
      .map(([key, value]) => [humanise(key), display(value)]);
  } else if (data !== null && data !== undefined) {
    rows = [['Value', display(data)]];
  }
  if (rows.length === 0) return <p class="muted">No figures to show.</p>;
  return (
    <dl class="stat-row">
      {rows.slice(0, 8).map(([label, value], i) => (
        <div class="stat" key={`${label}-${i}`}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** An inline SVG trend line with a text alternative (the SVG itself is a labelled image). */
export function Sparkline(props: { values: number[]; label: string }) {
  const values = props.values.filter(isNumber).slice(-60);
  if (values.length === 0) return <p class="muted">No trend yet.</p>;
  const min = Math.min(...values);
  const max = Math.max(...values);
  const latest = values[values.length - 1];
  const summary =
    values.length === 1
      ? `${props.label}: ${display(latest)}`
      : `${props.label}: ${values.length} points from ${display(values[0])} to ${display(latest)}, lowest ${display(min)}, highest ${display(max)}`;
  const width = 200;
  const height = 48;
  const span = max - min || 1;
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  const points = values.map((v, i) => `${(i * step).toFixed(1)},${(height - 4 - ((v - min) / span) * (height - 8)).toFixed(1)}`).join(' ');
  return (
    <figure class="sparkline">
      <svg viewBox={`0 0 ${width} ${height}`} preserveAspectRatio="none" role="img" aria-label={summary} focusable="false">
        {values.length > 1 ? (
          <polyline points={points} fill="none" stroke="currentColor" stroke-width="2" vector-effect="non-scaling-stroke" />
        ) : (
          <circle cx={width / 2} cy={height / 2} r="3" fill="currentColor" />
        )}
      </svg>
      <figcaption>
        <span class="sparkline-latest">{display(latest)}</span> <span class="muted">latest</span>
      </figcaption>
    </figure>
  );
}

function RankedList(props: { data: unknown }) {
  const { data } = props;
  let items: unknown[] = [];
  if (Array.isArray(data)) items = data;
  else if (isObject(data)) {
    const named = pick(data, ['items', 'ranking', 'entries', 'list', 'results']);
    items = Array.isArray(named) ? named : ((Object.values(data).find(Array.isArray) as unknown[] | undefined) ?? []);
  }
  if (items.length === 0) return <p class="muted">Nothing ranked yet.</p>;
  return (
    <ol class="ranked-list">
      {items.slice(0, 10).map((item, i) => {
        const label = isObject(item)
          ? (text(pick(item, ['label', 'name', 'title', 'counterparty', 'description', 'id'])) ?? display(item))
          : display(item);
        const value = isObject(item) ? pick(item, ['value', 'score', 'amount', 'count', 'total']) : undefined;
        return (
          <li key={i}>
            <span>{label}</span>
            {value !== undefined && <span class="ranked-value">{display(value)}</span>}
          </li>
        );
      })}
    </ol>
  );
}

function ProgressBar(props: { data: unknown; label: string }) {
  const { data } = props;
  let value: number | undefined;
  let max: number | undefined;
  if (isNumber(data)) value = data;
  else if (isObject(data)) {
    const v = pick(data, ['value', 'progress', 'percent', 'percentage', 'current', 'done', 'completed']);
    const m = pick(data, ['max', 'total', 'target', 'goal', 'of']);
    value = isNumber(v) ? v : headlineOf(data)?.value;
    max = isNumber(m) && m > 0 ? m : undefined;
  }
  if (value === undefined) return <p class="muted">No progress to show.</p>;
  if (max === undefined) max = value <= 1 && value >= 0 ? 1 : 100;
  const clamped = Math.min(Math.max(value, 0), max);
  const percent = Math.round((clamped / max) * 100);
  const caption = isObject(data) ? text(pick(data, ['label', 'title', 'name'])) : null;
  const valueText = `${percent}% (${display(clamped)} of ${display(max)})`;
  return (
    <div class="progress">
      <div
        class="progress-track"
        role="progressbar"
        aria-label={caption ?? props.label}
        aria-valuemin={0}
        aria-valuemax={max}
        aria-valuenow={clamped}
        aria-valuetext={valueText}
      >
        <div class="progress-fill" style={{ width: `${percent}%` }} />
      </div>
      <p class="muted">{valueText}</p>
    </div>
  );
}

function MeetingPrep(props: { data: unknown }) {
  const data = isObject(props.data) ? props.data : {};
  const title = text(pick(data, ['title', 'name', 'subject'])) ?? 'Upcoming meeting';
  const starts = text(pick(data, ['startsAt', 'starts_at', 'start', 'time', 'when']));
  const attendees = pick(data, ['attendees', 'participants', 'people']);
  const notes = pick(data, ['agenda', 'notes', 'talkingPoints', 'talking_points', 'prep']);
  return (
    <div class="meeting-prep">
      <p class="meeting-title">{title}</p>
      {starts && <p class="muted">{formatDate(starts)}</p>}
      {Array.isArray(attendees) && attendees.length > 0 && (
        <p>
          With{' '}
          {attendees
            .slice(0, 8)
            .map((a) => (isObject(a) ? (text(pick(a, ['name', 'email'])) ?? '—') : display(a)))
            .join(', ')}
        </p>
      )}
      {Array.isArray(notes) ? (
        <ul>
          {notes.slice(0, 8).map((note, i) => (
            <li key={i}>{display(note)}</li>
          ))}
        </ul>
      ) : (
        typeof notes === 'string' && <p>{display(notes)}</p>
      )}
    </div>
  );
}

function CtaBanner(props: { data: unknown; children?: ComponentChildren }) {
  const data = isObject(props.data) ? props.data : {};
  const headline = text(pick(data, ['title', 'headline', 'heading']));
  const body = text(pick(data, ['message', 'body', 'text', 'description']));
  return (
    <div class="cta-banner">
      {headline && <p class="cta-headline">{headline}</p>}
      {body && <p>{body}</p>}
      {props.children}
    </div>
  );
}

function Badges(props: { model: SurfaceComponent; live: boolean }) {
  const { model } = props;
  return (
    <p class="widget-meta">
      {model.stale && (
        <span class="badge badge-warn" title="The provider has not answered recently; this may be out of date">
          Stale
        </span>
      )}
      {model.degraded && (
        <span class="badge badge-warn" title="The provider answered with partial data">
          Partial data
        </span>
      )}
      {props.live && <span class="badge badge-good">Live</span>}
      {model.fetchedAt && <span class="muted">Updated {formatDate(model.fetchedAt)}</span>}
    </p>
  );
}

/** One surface component as a card: a heading (package and capability), badges and the component's body. */
export function Widget(props: { model: SurfaceComponent; series?: number[]; live?: boolean; onActionDone?: () => void }) {
  const { model } = props;
  const title = humanise(model.capability.name);
  const isAction = model.capability.mode === 'action';
  const label = `${title} (${model.package.name})`;
  let body: ComponentChildren;
  if (isAction) {
    const form = <ActionForm model={model} onDone={props.onActionDone} />;
    body = model.component === 'cta_banner' ? <CtaBanner data={model.data}>{form}</CtaBanner> : form;
  } else if ((model.data === null || model.data === undefined) && model.capability.mode === 'state') {
    body = <p class="muted">Waiting for the first data from {model.package.name}…</p>;
  } else if (model.data === null || model.data === undefined) {
    body = <p class="muted">Nothing from {model.package.name} yet.</p>;
  } else {
    switch (model.component) {
      case 'sparkline': {
        const series = seriesOf(model.data);
        const values = series.length > 0 ? series : (props.series ?? []);
        const headline = headlineOf(model.data);
        body = <Sparkline values={values.length > 0 ? values : headline ? [headline.value] : []} label={label} />;
        break;
      }
      case 'ranked_list':
        body = <RankedList data={model.data} />;
        break;
      case 'progress_bar':
        body = <ProgressBar data={model.data} label={label} />;
        break;
      case 'meeting_prep':
        body = <MeetingPrep data={model.data} />;
        break;
      case 'cta_banner':
        body = <CtaBanner data={model.data} />;
        break;
      default:
        body = <StatRow data={model.data} />;
    }
  }
  return (
    <section class={`card widget widget-${model.component}`} aria-label={label}>
      <h3>{title}</h3>
      <p class="widget-source muted">{model.package.name}</p>
      {model.capability.description && !isAction && <p class="visually-hidden">{model.capability.description}</p>}
      <Badges model={model} live={Boolean(props.live)} />
      {body}
    </section>
  );
}
