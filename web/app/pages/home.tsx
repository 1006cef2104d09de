import { useEffect, useRef, useState } from 'preact/hooks';
import { describeError, ok } from '../../shared/api';
import { Link } from '../../shared/router';
import { EmptyState, Loading, Notice, PageTitle } from '../../shared/ui';
import { gateway, GatewayFrame, useGatewayEvents } from '../gateway';
import { api } from '../session';
import { headlineOf, SurfaceComponent, Widget } from '../widgets';
import { PRODUCT } from '../product';
import { RecentConversations } from './inbox';

interface Surface {
  placement: string;
  /** As the API answers them, with the runtimes' data read defensively (`SurfaceComponent`). */
  components: SurfaceComponent[];
}

const keyOf = (c: { package: { installId: string }; capability: { name: string } }) => `${c.package.installId}:${c.capability.name}`;

/**
 * One placement's components, kept live: realtime capabilities are subscribed
 * on the gateway and `capability.data` replaces their data in place; while a
 * polled (state) capability has no data yet, the surface is fetched again with
 * growing pauses until the worker's first poll has filled the cache.
 */
function useSurface(placement: string, also: string[] = []) {
  const [surface, setSurface] = useState<Surface | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [series, setSeries] = useState<Record<string, number[]>>({});
  const [live, setLive] = useState<Record<string, boolean>>({});
  const retry = useRef<{ timer?: ReturnType<typeof setTimeout>; attempt: number }>({ attempt: 0 });

  const load = async () => {
    try {
      const answers: Surface[] = await Promise.all(
        [placement, ...also].map((p) => ok(api.GET('/v1/surfaces/{placement}', { params: { path: { placement: p } } }))),
      );
      // One widget per capability, in the order of the placements asked for.
      const seen = new Set<string>();
      const components = answers
        .flatMap((next) => (Array.isArray(next?.components) ? next.components : []))
        .filter((c) => !seen.has(keyOf(c)) && Boolean(seen.add(keyOf(c))));
      setSurface({ placement, components });
      setError(null);
      // A state widget without widget params (`params: null`) is never polled: nothing to wait for.
      const waiting = components.some((c) => c.data == null && c.capability.mode === 'state' && c.params !== null);
      if (retry.current.timer) clearTimeout(retry.current.timer);
      if (waiting && retry.current.attempt < 12) {
        const delay = Math.min(500 * 2 ** retry.current.attempt++, 4_000);
        retry.current.timer = setTimeout(() => void load(), delay);
      }
    } catch (failure) {
      setError(describeError(failure));
    }
  };

  useEffect(() => {
    void load();
    return () => retry.current.timer && clearTimeout(retry.current.timer);
  }, [placement, also.join(',')]);

  // Realtime capabilities of the surface stay subscribed while it is shown.
  const realtimeKeys = (surface?.components ?? [])
    .filter((c) => c.capability.mode === 'realtime')
    .map(keyOf)
    .sort()
    .join(',');
  useEffect(() => {
    const offs = (surface?.components ?? [])
      .filter((c) => c.capability.mode === 'realtime')
      .map((c) => gateway.subscribeCapability(c.package.installId, c.capability.name));
    return () => offs.forEach((off) => off());
  }, [realtimeKeys]);

  useGatewayEvents(
    ['capability.data', 'capability.stale'],
    (frame: GatewayFrame) => {
      const data = frame.data ?? {};
      const key = `${String(data.install_id)}:${String(data.capability)}`;
      setSurface((current) => {
        if (!current || !current.components.some((c) => keyOf(c) === key)) return current;
        return {
          ...current,
          components: current.components.map((c) =>
            keyOf(c) !== key
              ? c
              : frame.type === 'capability.data'
                ? { ...c, data: data.data, stale: false, fetchedAt: typeof data.at === 'string' ? data.at : new Date().toISOString() }
                : { ...c, stale: true },
          ),
        };
      });
      if (frame.type === 'capability.data') {
        const headline = headlineOf(data.data);
        if (headline) setSeries((all) => ({ ...all, [key]: [...(all[key] ?? []), headline.value].slice(-60) }));
        setLive((all) => ({ ...all, [key]: true }));
      } else setLive((all) => ({ ...all, [key]: false }));
    },
    [],
  );
  useGatewayEvents(
    ['surface.updated'],
    (frame) => {
      if (frame.data?.placement === placement || also.includes(String(frame.data?.placement))) void load();
    },
    [placement, also.join(',')],
  );

  return { surface, error, series, live, reload: load };
}

/**
 * The placements a package page shows besides its own (`service_context`):
 * the package page is where a user goes to see everything of one package,
 * so it also shows that package's home widgets and daily brief entries
 * (docs/components.md, "Placements").
 */
export const PACKAGE_PAGE_ALSO = ['home_widgets', 'daily_brief'];

/**
 * One placement as a titled list of widgets; `only` narrows it (a package
 * page shows that package's components, and for `service_context` also its
 * widgets of the other placements, PACKAGE_PAGE_ALSO).
 */
export function Placement(props: { placement: string; heading: string; empty: string; only?: (model: SurfaceComponent) => boolean }) {
  const state = useSurface(props.placement, props.only && props.placement === 'service_context' ? PACKAGE_PAGE_ALSO : []);
  const { error, series, live, reload } = state;
  const surface =
    state.surface && props.only ? { ...state.surface, components: state.surface.components.filter(props.only) } : state.surface;
  const headingId = `${props.placement}-heading`;
  return (
    <section aria-labelledby={headingId} class="placement">
      <h2 id={headingId}>{props.heading}</h2>
      {error && <Notice kind="error">{error}</Notice>}
      {!surface && !error && <Loading />}
      {surface && surface.components.length === 0 && <EmptyState>{props.empty}</EmptyState>}
      {surface && surface.components.length > 0 && (
        <div class="widgets">
          {surface.components.map((model) => (
            <Widget
              key={keyOf(model)}
              model={model}
              series={series[keyOf(model)]}
              live={live[keyOf(model)]}
              onActionDone={() => void reload()}
            />
          ))}
        </div>
      )}
    </section>
  );
}

export function HomePage() {
  return (
    <>
      <PageTitle product={PRODUCT}>Home</PageTitle>
      <RecentConversations />
      <Placement
        placement="home_widgets"
        heading="Your widgets"
        empty="No widgets yet. Install a package from the marketplace to see its widgets here."
      />
      {/* The brief lists what is placed in it and not already a home widget (the service leaves those out). */}
      <Placement placement="daily_brief" heading="Daily brief" empty="Nothing in today’s brief." />
      <p>
        <Link href="/marketplace">Find packages in the marketplace</Link>
      </p>
    </>
  );
}
