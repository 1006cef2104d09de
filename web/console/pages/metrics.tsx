import type { ComponentChildren } from 'preact';
import { useId } from 'preact/hooks';
import { ok, type Schemas } from '../../shared/api';
import { navigate, useLocation } from '../../shared/router';
import { EmptyState, formatDate, Loaded, Notice, PageTitle, useResource } from '../../shared/ui';
import { Section } from '../components';
import { PRODUCT } from '../product';
import { api } from '../session';
import './metrics.css';

type PackageMetrics = Schemas['PackageMetricsDto'];
type CapabilityMetrics = Schemas['CapabilityMetricsDto'];
type Point = Schemas['CapabilityMetricsPointDto'];
type DeliveryMetrics = Schemas['DeliveryMetricsDto'];
type Window = '1h' | '24h' | '7d';

const WINDOWS: Array<{ value: Window; label: string; per: string }> = [
  { value: '1h', label: 'Last hour', per: 'minute' },
  { value: '24h', label: 'Last 24 hours', per: 'hour' },
  { value: '7d', label: 'Last 7 days', per: 'hour' },
];

const isWindow = (value: string | null): value is Window => WINDOWS.some((w) => w.value === value);
const percent = (rate: number | null | undefined) =>
  rate === null || rate === undefined ? '—' : `${(rate * 100).toFixed(rate < 0.001 && rate > 0 ? 2 : 1)} %`;
const ms = (value: number | null) => (value === null ? '—' : `${value} ms`);

/** The time of a bucket as the chart labels it: the clock for minutes and hours of a day, the date too for a week. */
function bucketLabel(iso: string, window: Window): string {
  const date = new Date(iso);
  const time = date.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  return window === '7d' ? `${date.toLocaleDateString(undefined, { month: 'short', day: 'numeric' })} ${time}` : time;
}

/**
 * Metrics per capability of one package (calls, error rate and errors by code, p50 and p95 latency, with charts
 * over time) and the webhook delivery success of its app's endpoints, over a window the developer picks. The
 * package and the window are in the address (`?package=…&window=…`), so a view can be shared and reloaded.
 */
export function MetricsPage() {
  const { query } = useLocation();
  const packages = useResource(() => ok(api.GET('/v1/providers/packages')).then((r) => r.packages), []);
  const window: Window = isWindow(query.get('window')) ? (query.get('window') as Window) : '24h';
  const show = (packageId: string, next: Window) =>
    navigate(`/metrics?package=${encodeURIComponent(packageId)}&window=${next}`, { replace: true });
  return (
    <>
      <PageTitle product={PRODUCT}>Metrics</PageTitle>
      <Loaded resource={packages}>
        {(list) => {
          if (list.length === 0) return <EmptyState>No packages yet. Metrics appear once a package’s capabilities are called.</EmptyState>;
          const chosen = list.find((p) => p.id === query.get('package')) ?? list[0];
          return (
            <>
              <form class="metrics-controls" onSubmit={(event) => event.preventDefault()}>
                <div class="field">
                  <label for="metrics-package">Package</label>
                  <select id="metrics-package" value={chosen.id} onChange={(event) => show(event.currentTarget.value, window)}>
                    {list.map((p) => (
                      <option key={p.id} value={p.id}>
                        {p.name}
                      </option>
                    ))}
                  </select>
                </div>
                <fieldset class="field metrics-window">
                  <legend>Window</legend>
                  {WINDOWS.map((w) => (
                    <label key={w.value}>
                      <input
                        type="radio"
                        name="window"
                        value={w.value}
                        checked={w.value === window}
                        onChange={() => show(chosen.id, w.value)}
                      />{' '}
                      {w.label}
                    </label>
                  ))}
                </fieldset>
              </form>
              <PackageMetricsView key={`${chosen.id}:${window}`} packageId={chosen.id} appId={chosen.appId} window={window} />
            </>
          );
        }}
      </Loaded>
    </>
  );
}

function PackageMetricsView(props: { packageId: string; appId: string; window: Window }) {
  const { packageId, appId, window } = props;
  const data = useResource(
    () =>
      Promise.all([
        ok(api.GET('/v1/providers/packages/{package_id}/metrics', { params: { path: { package_id: packageId }, query: { window } } })),
        ok(api.GET('/v1/providers/apps/{app_id}/webhook/metrics', { params: { path: { app_id: appId }, query: { window } } })),
      ]).then(([capabilities, deliveries]) => ({ capabilities, deliveries })),
    [packageId, appId, window],
  );
  return (
    <Loaded resource={data}>
      {({ capabilities, deliveries }) => (
        <>
          <p class="hint" role="status">
            {capabilities.rolled_up_to
              ? `Counted up to ${formatDate(capabilities.rolled_up_to)} (refreshed every minute).`
              : 'Not counted yet: the first count runs within a minute.'}{' '}
            Latency percentiles are estimates within 19 % of the exact values.
          </p>
          {capabilities.capabilities.length === 0 ? (
            <EmptyState>No calls to this package’s capabilities in this window.</EmptyState>
          ) : (
            capabilities.capabilities.map((capability) => (
              <CapabilityCard key={capability.name} capability={capability} metrics={capabilities} window={window} />
            ))
          )}
          <DeliverySuccess deliveries={deliveries} />
        </>
      )}
    </Loaded>
  );
}

function CapabilityCard(props: { capability: CapabilityMetrics; metrics: PackageMetrics; window: Window }) {
  const { capability, window } = props;
  const per = WINDOWS.find((w) => w.value === window)?.per ?? 'hour';
  const busiest = capability.series.reduce<Point | null>((best, p) => (best === null || p.calls > best.calls ? p : best), null);
  return (
    <Section title={capability.name}>
      <dl class="metrics-figures">
        <div>
          <dt>Calls</dt>
          <dd>{capability.calls.toLocaleString()}</dd>
        </div>
        <div>
          <dt>Error rate</dt>
          <dd>{percent(capability.error_rate)}</dd>
        </div>
        <div>
          <dt>p50 latency</dt>
          <dd>{ms(capability.p50_ms)}</dd>
        </div>
        <div>
          <dt>p95 latency</dt>
          <dd>{ms(capability.p95_ms)}</dd>
        </div>
        <div>
          <dt>Served from cache</dt>
          <dd>{capability.cached.toLocaleString()}</dd>
        </div>
      </dl>
      {capability.errors_by_code.length > 0 && (
        <table class="metrics-codes">
          <caption>Errors by code</caption>
          <thead>
            <tr>
              <th scope="col">Code</th>
              <th scope="col">Errors</th>
              <th scope="col">Share of calls</th>
            </tr>
          </thead>
          <tbody>
            {capability.errors_by_code.map((e) => (
              <tr key={e.code}>
                <td>
                  <code>{e.code}</code>
                </td>
                <td>{e.count}</td>
                <td>{percent(capability.calls === 0 ? null : e.count / capability.calls)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div class="metrics-charts">
        <CallsChart
          capability={capability}
          window={window}
          summary={`Calls per ${per}: ${capability.calls} in all, ${capability.errors} failed${
            busiest && busiest.calls > 0 ? `; the most, ${busiest.calls}, at ${bucketLabel(busiest.start, window)}` : ''
          }.`}
        />
        <LatencyChart
          capability={capability}
          window={window}
          summary={`Latency per ${per}: p50 ${ms(capability.p50_ms)} and p95 ${ms(capability.p95_ms)} over the window.`}
        />
      </div>
      <details class="metrics-data">
        <summary>Data of the charts, per {per}</summary>
        <SeriesTable capability={capability} window={window} />
      </details>
    </Section>
  );
}

const WIDTH = 640;
const HEIGHT = 180;
const PAD = { left: 48, right: 12, top: 12, bottom: 28 };
const PLOT_W = WIDTH - PAD.left - PAD.right;
const PLOT_H = HEIGHT - PAD.top - PAD.bottom;

/** A round upper bound for the y axis: 1, 2 or 5 times a power of ten, at least `max`. */
function niceMax(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  return [1, 2, 5, 10].map((m) => m * power).find((v) => v >= max) ?? max;
}

/** The chart frame: y axis with 0 and its maximum, x axis with the first and last bucket's time; the plot inside. */
function Chart(props: {
  title: string;
  summary: string;
  series: Point[];
  window: Window;
  yMax: number;
  unit: string;
  children: ComponentChildren;
  legend?: ComponentChildren;
}) {
  const titleId = useId();
  const descId = useId();
  const first = props.series[0];
  const last = props.series[props.series.length - 1];
  return (
    <figure class="metrics-chart">
      <figcaption id={titleId}>{props.title}</figcaption>
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-labelledby={`${titleId} ${descId}`} preserveAspectRatio="none">
        <desc id={descId}>{props.summary}</desc>
        <line class="axis" x1={PAD.left} y1={PAD.top + PLOT_H} x2={PAD.left + PLOT_W} y2={PAD.top + PLOT_H} />
        <line class="grid-line" x1={PAD.left} y1={PAD.top} x2={PAD.left + PLOT_W} y2={PAD.top} />
        <text class="tick" x={PAD.left - 6} y={PAD.top + 4} text-anchor="end">
          {props.yMax}
          {props.unit}
        </text>
        <text class="tick" x={PAD.left - 6} y={PAD.top + PLOT_H + 4} text-anchor="end">
          0
        </text>
        {first && (
          <text class="tick" x={PAD.left} y={HEIGHT - 8} text-anchor="start">
            {bucketLabel(first.start, props.window)}
          </text>
        )}
        {last && (
          <text class="tick" x={PAD.left + PLOT_W} y={HEIGHT - 8} text-anchor="end">
            {bucketLabel(last.start, props.window)}
          </text>
        )}
        {props.children}
      </svg>
      {props.legend && <p class="metrics-legend">{props.legend}</p>}
    </figure>
  );
}

function CallsChart(props: { capability: CapabilityMetrics; window: Window; summary: string }) {
  const { series } = props.capability;
  const yMax = niceMax(Math.max(0, ...series.map((p) => p.calls)));
  const slot = PLOT_W / Math.max(1, series.length);
  const y = (value: number) => PAD.top + PLOT_H - (value / yMax) * PLOT_H;
  return (
    <Chart
      title="Calls"
      summary={props.summary}
      series={series}
      window={props.window}
      yMax={yMax}
      unit=""
      legend={
        <>
          <span class="swatch swatch-calls" aria-hidden="true" /> succeeded <span class="swatch swatch-errors" aria-hidden="true" /> failed
        </>
      }
    >
      {series.map((p, i) =>
        p.calls === 0 ? null : (
          <g key={p.start}>
            <rect
              class="bar-calls"
              x={PAD.left + i * slot + slot * 0.1}
              width={slot * 0.8}
              y={y(p.calls)}
              height={PLOT_H - (y(p.calls) - PAD.top)}
            />
            {p.errors > 0 && (
              <rect
                class="bar-errors"
                x={PAD.left + i * slot + slot * 0.1}
                width={slot * 0.8}
                y={y(p.errors)}
                height={PLOT_H - (y(p.errors) - PAD.top)}
              />
            )}
          </g>
        ),
      )}
    </Chart>
  );
}

function LatencyChart(props: { capability: CapabilityMetrics; window: Window; summary: string }) {
  const { series } = props.capability;
  const yMax = niceMax(Math.max(0, ...series.map((p) => p.p95_ms ?? 0)));
  const slot = PLOT_W / Math.max(1, series.length);
  const x = (i: number) => PAD.left + i * slot + slot / 2;
  const y = (value: number) => PAD.top + PLOT_H - (value / yMax) * PLOT_H;
  /** One polyline per run of buckets with calls: a bucket without calls has no latency, so the line breaks there. */
  const runs = (key: 'p50_ms' | 'p95_ms') => {
    const out: string[] = [];
    let current: string[] = [];
    series.forEach((p, i) => {
      const value = p[key];
      if (value === null) {
        if (current.length > 0) out.push(current.join(' '));
        current = [];
      } else current.push(`${x(i).toFixed(1)},${y(value).toFixed(1)}`);
    });
    if (current.length > 0) out.push(current.join(' '));
    return out;
  };
  const line = (key: 'p50_ms' | 'p95_ms', cls: string) =>
    runs(key).map((points) =>
      points.includes(' ') ? (
        <polyline key={`${key}${points}`} class={cls} points={points} />
      ) : (
        <circle key={`${key}${points}`} class={cls} cx={points.split(',')[0]} cy={points.split(',')[1]} r="2.5" />
      ),
    );
  return (
    <Chart
      title="Latency"
      summary={props.summary}
      series={series}
      window={props.window}
      yMax={yMax}
      unit=" ms"
      legend={
        <>
          <span class="swatch swatch-p50" aria-hidden="true" /> p50 <span class="swatch swatch-p95" aria-hidden="true" /> p95
        </>
      }
    >
      {line('p95_ms', 'line-p95')}
      {line('p50_ms', 'line-p50')}
    </Chart>
  );
}

/** The charts' numbers as a table: the buckets that had calls (the others are zeros). */
function SeriesTable(props: { capability: CapabilityMetrics; window: Window }) {
  const rows = props.capability.series.filter((p) => p.calls > 0);
  if (rows.length === 0) return <p>No calls in any bucket.</p>;
  return (
    <div class="table-wrap">
      <table>
        <caption class="visually-hidden">{`Calls and latency of ${props.capability.name} per bucket`}</caption>
        <thead>
          <tr>
            <th scope="col">From</th>
            <th scope="col">Calls</th>
            <th scope="col">Failed</th>
            <th scope="col">p50</th>
            <th scope="col">p95</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((p) => (
            <tr key={p.start}>
              <td>{bucketLabel(p.start, props.window)}</td>
              <td>{p.calls}</td>
              <td>{p.errors}</td>
              <td>{ms(p.p50_ms)}</td>
              <td>{ms(p.p95_ms)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function DeliverySuccess(props: { deliveries: DeliveryMetrics }) {
  const { endpoints } = props.deliveries;
  return (
    <Section title="Webhook deliveries of this package’s app">
      {endpoints.length === 0 ? (
        <Notice kind="info">The app has no webhook endpoint.</Notice>
      ) : (
        <div class="table-wrap">
          <table>
            <caption class="visually-hidden">Webhook delivery success per endpoint</caption>
            <thead>
              <tr>
                <th scope="col">Endpoint</th>
                <th scope="col">Deliveries</th>
                <th scope="col">Delivered</th>
                <th scope="col">Failed</th>
                <th scope="col">Pending</th>
                <th scope="col">Success rate</th>
              </tr>
            </thead>
            <tbody>
              {endpoints.map((e) => (
                <tr key={e.endpoint_id}>
                  <td>
                    <code>{e.endpoint_id}</code>
                    {e.is_primary ? ' (primary)' : ''}
                  </td>
                  <td>{e.deliveries}</td>
                  <td>{e.delivered}</td>
                  <td>{e.failed}</td>
                  <td>{e.pending}</td>
                  <td>{percent(e.success_rate)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Section>
  );
}
