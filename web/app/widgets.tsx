import type { ComponentChildren } from 'preact';
import type { Schemas } from '../shared/api';
import { isObject } from '../shared/json';
import { formatDate } from '../shared/ui';
import { ActionForm } from './action-flow';
import {
  componentsToRender,
  display,
  formatValue,
  headlineOf,
  humanise,
  isNumber,
  labelOf,
  pick,
  seriesOf as contractSeries,
  specOf,
  statRows,
} from './component-contracts';

/**
 * Surface components (`GET /v1/surfaces/:placement`). Their data comes from
 * provider runtimes, so nothing about its shape is trusted: every value is
 * read defensively and rendered as text (never as HTML).
 */
export type SurfaceComponent = Omit<Schemas['SurfaceComponentDto'], 'data' | 'input' | 'components' | 'title' | 'fields' | 'params'> & {
  data: unknown;
  input?: { schema?: unknown; example?: unknown };
  /** Every preferred component, in order (older answers have `component` alone). */
  components?: string[];
  /** Widget heading from the descriptor. */
  title?: string;
  /** Label, unit and format per data field (docs/components.md). */
  fields?: Record<string, unknown>;
  /** State: the widget params; null when the provider gave no defaults for a required param. */
  params?: unknown;
};

export { display, headlineOf, humanise, isNumber } from './component-contracts';

/** A numeric series from data (component-contracts.ts `seriesOf`, values only). */
export function seriesOf(data: unknown): number[] {
  return contractSeries(data).values;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() ? value : isNumber(value) ? String(value) : null;
}

function StatRow(props: { data: unknown; fields?: unknown }) {
  const rows = statRows(props.data, props.fields);
  if (rows.length === 0) return <p class="muted">No figures to show.</p>;
  return (
    <dl class="stat-row">
      {rows.map(({ label, value }, i) => (
        <div class="stat" key={`${label}-${i}`}>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

/** An inline SVG trend line with a text alternative (the SVG itself is a labelled image). */
export function Sparkline(props: { values: number[]; label: string; format?: (value: number) => string }) {
  const show = props.format ?? display;
  const values = props.values.filter(isNumber).slice(-60);
  if (values.length === 0) return <p class="muted">No trend yet.</p>;
  const min = Math.min(...values);
  const max = Math.max(...values);
  const latest = values[values.length - 1];
  const summary =
    values.length === 1
      ? `${props.label}: ${show(latest)}`
      : `${props.label}: ${values.length} points from ${show(values[0])} to ${show(latest)}, lowest ${show(min)}, highest ${show(max)}`;
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
        <span class="sparkline-latest">{show(latest)}</span> <span class="muted">latest</span>
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

/** The body of one non-action component for data (its contract: docs/components.md). */
function ComponentBody(props: { component: string; model: SurfaceComponent; label: string; series?: number[] }) {
  const { model, label } = props;
  switch (props.component) {
    case 'sparkline': {
      const found = contractSeries(model.data);
      const spec = specOf(model.fields, found.key ?? headlineOf(model.data)?.key ?? 'value');
      const headline = headlineOf(model.data);
      const values = found.values.length > 0 ? found.values : (props.series ?? []);
      const seriesLabel = found.key ? `${label}, ${labelOf(found.key, spec)}` : label;
      return (
        <Sparkline
          values={values.length > 0 ? values : headline ? [headline.value] : []}
          label={seriesLabel}
          format={(value) => formatValue(value, spec)}
        />
      );
    }
    case 'ranked_list':
      return <RankedList data={model.data} />;
    case 'progress_bar':
      return <ProgressBar data={model.data} label={label} />;
    case 'meeting_prep':
      return <MeetingPrep data={model.data} />;
    case 'cta_banner':
      return <CtaBanner data={model.data} />;
    default:
      return <StatRow data={model.data} fields={model.fields} />;
  }
}

/**
 * One surface component as a card: a heading (the descriptor's title, else the
 * capability name), the package, badges, and every preferred component that
 * fits the data, in the provider's order (component-contracts.ts).
 */
export function Widget(props: {
  model: SurfaceComponent;
  series?: number[];
  live?: boolean;
  onActionDone?: () => void;
  /** Drawn without calling anything (the console's preview): an action's form is shown, disabled. */
  readOnly?: boolean;
}) {
  const { model } = props;
  const title = typeof model.title === 'string' && model.title.trim() ? model.title : humanise(model.capability.name);
  const isAction = model.capability.mode === 'action';
  const label = `${title} (${model.package.name})`;
  let body: ComponentChildren;
  if (isAction) {
    const form = props.readOnly ? (
      <fieldset class="widget-read-only" disabled>
        <legend class="visually-hidden">Preview only: the action is not run from here</legend>
        <ActionForm model={model} />
      </fieldset>
    ) : (
      <ActionForm model={model} onDone={props.onActionDone} />
    );
    body = model.component === 'cta_banner' ? <CtaBanner data={model.data}>{form}</CtaBanner> : form;
  } else if ((model.data === null || model.data === undefined) && model.capability.mode === 'state' && model.params === null) {
    body = <p class="muted">{model.package.name} has not said what this widget shows by default, so there is nothing to show yet.</p>;
  } else if ((model.data === null || model.data === undefined) && model.capability.mode === 'state') {
    body = <p class="muted">Waiting for the first data from {model.package.name}…</p>;
  } else if (model.data === null || model.data === undefined) {
    body = <p class="muted">Nothing from {model.package.name} yet.</p>;
  } else {
    const live = (props.series?.length ?? 0) > 0 || (model.capability.mode === 'realtime' && headlineOf(model.data) !== null);
    const shown = componentsToRender(model.components, model.component, model.data, { liveSeries: live });
    body = shown.map((component) => (
      <div class={`widget-part widget-part-${component}`} key={component}>
        <ComponentBody component={component} model={model} label={label} series={props.series} />
      </div>
    ));
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
