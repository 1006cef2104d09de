import { render } from 'preact';
import { useEffect, useRef } from 'preact/hooks';
import '../shared/styles.css';
import './console.css';
import { bearer, ok, publicApi } from '../shared/api';
import { matchRoute, Route, setBase, useLocation } from '../shared/router';
import { useSession } from '../shared/session';
import { Button, Layout, Notice, PageTitle } from '../shared/ui';
import { AccountPage } from './pages/account';
import { AppDetailPage, AppsPage, NewAppPage } from './pages/apps';
import { CheckEmail, LogIn, SignUp, VerifyEmail } from './pages/auth';
import { OverviewPage } from './pages/overview';
import { ForgotPassword, ResetPassword } from './pages/password-reset';
import { NewPackagePage, NewVersionPage, PackageDetailPage, PackagesPage, VersionPage } from './pages/packages';
import { DeliveryPage, EndpointPage, WebhookPage } from './pages/webhooks';
import { EventsPage } from './pages/events';
import { ExecutionPage, ExecutionsPage } from './pages/executions';
import { MetricsPage } from './pages/metrics';
import { PRODUCT } from './product';
import { session } from './session';
import { DocsLink } from './components';

/** Pages anyone may open: they work without a developer session. */
const PUBLIC_ROUTES: Route[] = [
  { path: '/signup', render: () => <SignUp /> },
  { path: '/check-email', render: () => <CheckEmail /> },
  { path: '/verify-email', render: () => <VerifyEmail /> },
  { path: '/forgot-password', render: () => <ForgotPassword /> },
  { path: '/reset-password', render: () => <ResetPassword /> },
];

// First match wins: `/versions/new` comes before `/versions/:versionId`.
const ROUTES: Route[] = [
  { path: '/', render: () => <OverviewPage /> },
  { path: '/login', render: () => <OverviewPage /> },
  { path: '/account', render: () => <AccountPage /> },
  { path: '/apps', render: () => <AppsPage /> },
  { path: '/apps/new', render: () => <NewAppPage /> },
  { path: '/apps/:appId', render: (p) => <AppDetailPage key={p.appId} appId={p.appId} /> },
  { path: '/apps/:appId/webhook', render: (p) => <WebhookPage key={p.appId} appId={p.appId} /> },
  {
    path: '/apps/:appId/webhook/endpoints/:endpointId',
    render: (p) => <EndpointPage key={p.endpointId} appId={p.appId} endpointId={p.endpointId} />,
  },
  { path: '/apps/:appId/deliveries/:deliveryId', render: (p) => <DeliveryPage appId={p.appId} deliveryId={p.deliveryId} /> },
  { path: '/events', render: () => <EventsPage /> },
  { path: '/executions', render: () => <ExecutionsPage /> },
  { path: '/executions/:requestId', render: (p) => <ExecutionPage key={p.requestId} requestId={p.requestId} /> },
  { path: '/packages', render: () => <PackagesPage /> },
  { path: '/packages/new', render: () => <NewPackagePage /> },
  { path: '/packages/:packageId', render: (p) => <PackageDetailPage packageId={p.packageId} /> },
  { path: '/packages/:packageId/versions/new', render: (p) => <NewVersionPage packageId={p.packageId} /> },
  {
    path: '/packages/:packageId/versions/:versionId',
    render: (p) => <VersionPage key={p.versionId} packageId={p.packageId} versionId={p.versionId} />,
  },
  { path: '/metrics', render: () => <MetricsPage /> },
];

const NAV = [
  { href: '/', label: 'Overview' },
  { href: '/apps', label: 'Apps' },
  { href: '/packages', label: 'Packages' },
  { href: '/executions', label: 'Executions' },
  { href: '/metrics', label: 'Metrics' },
  { href: '/events', label: 'Events' },
  { href: '/account', label: 'Account' },
];

function NotFound() {
  return (
    <>
      <PageTitle product={PRODUCT}>Page not found</PageTitle>
      <Notice kind="error">This page does not exist.</Notice>
    </>
  );
}

/**
 * After a move to another page, focus goes to the main region (as after a full
 * page load), so screen readers start at the new content instead of a link
 * that no longer exists. Not on the first render: the browser starts at the top.
 */
function useFocusOnPageChange(path: string) {
  const previous = useRef(path);
  useEffect(() => {
    if (previous.current === path) return;
    previous.current = path;
    document.getElementById('main')?.focus({ preventScroll: true });
  }, [path]);
}

function Console() {
  const current = useSession(session);
  const { path } = useLocation();
  useFocusOnPageChange(path);
  const open = matchRoute(PUBLIC_ROUTES, path);
  if (open) return open.route.render(open.params);
  if (!current) return <LogIn />;
  const match = matchRoute(ROUTES, path);
  const logOut = async () => {
    await ok(publicApi.POST('/v1/providers/auth/logout', { headers: bearer(current.token) })).catch(() => undefined);
    session.set(null);
  };
  return (
    <Layout
      product={PRODUCT}
      nav={NAV}
      account={
        <>
          <DocsLink />
          <span>{current.email}</span>
          <Button onClick={() => void logOut()}>Log out</Button>
        </>
      }
    >
      {match ? match.route.render(match.params) : <NotFound />}
    </Layout>
  );
}

setBase('/console');
render(<Console />, document.getElementById('root')!);
