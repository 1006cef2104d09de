import { render } from 'preact';
import '../shared/styles.css';
import './app.css';
import { bearer, ok, publicApi } from '../shared/api';
import { matchRoute, Route, setBase, useLocation } from '../shared/router';
import { useSession } from '../shared/session';
import { Button, Layout, Notice } from '../shared/ui';
import { gateway, useConnectionState } from './gateway';
import { AccountPage } from './pages/account';
import { AgentPage } from './pages/agent';
import { ContactsPage } from './pages/contacts';
import { ConversationPage, GroupConversationPage } from './pages/conversation';
import { GroupsPage } from './pages/groups';
import { HomePage } from './pages/home';
import { InboxPage } from './pages/inbox';
import { MarketplacePage, PackagePage } from './pages/marketplace';
import { SoulPage } from './pages/soul';
import { PRODUCT } from './product';
import { session } from './session';
import { SignIn } from './sign-in';
import { useEffect } from 'preact/hooks';
import { WaitingForYou } from './waiting-for-you';

const ROUTES: Route[] = [
  { path: '/', render: () => <HomePage /> },
  { path: '/inbox', render: () => <InboxPage /> },
  { path: '/contacts', render: () => <ContactsPage /> },
  { path: '/contacts/:contactId', render: (p) => <ConversationPage contactId={p.contactId} /> },
  { path: '/groups', render: () => <GroupsPage /> },
  { path: '/groups/:groupId', render: (p) => <GroupConversationPage groupId={p.groupId} /> },
  { path: '/marketplace', render: () => <MarketplacePage /> },
  { path: '/marketplace/:slug', render: (p) => <PackagePage slug={p.slug} /> },
  { path: '/soul', render: () => <SoulPage /> },
  { path: '/agent', render: () => <AgentPage /> },
  { path: '/account', render: () => <AccountPage /> },
];

const NAV = [
  { href: '/', label: 'Home' },
  { href: '/inbox', label: 'Inbox' },
  { href: '/contacts', label: 'Contacts' },
  { href: '/groups', label: 'Groups' },
  { href: '/marketplace', label: 'Marketplace' },
  { href: '/soul', label: 'Soul' },
  { href: '/agent', label: 'Agent' },
  { href: '/account', label: 'Account' },
];

gateway.onUnauthorized = () => session.set(null);

/** Live-updates status for the top bar: announced politely when it changes. */
function ConnectionStatus() {
  const state = useConnectionState();
  const label = { open: 'Live', connecting: 'Connecting…', offline: 'Offline, reconnecting…', stopped: 'Not connected' }[state];
  return (
    <span class={`badge ${state === 'open' ? 'badge-good' : 'badge-warn'}`} role="status" aria-label={`Live updates: ${label}`}>
      {label}
    </span>
  );
}

function App() {
  const current = useSession(session);
  const { path } = useLocation();
  const match = matchRoute(ROUTES, path);
  useEffect(() => {
    if (current) gateway.start(current.token);
    else gateway.stop();
  }, [current?.token]);
  if (!current) return <SignIn />;
  const signOut = async () => {
    await ok(publicApi.POST('/v1/auth/logout', { headers: bearer(current.token) })).catch(() => undefined);
    session.set(null);
  };
  return (
    <Layout
      product={PRODUCT}
      nav={NAV}
      account={
        <>
          <ConnectionStatus />
          <span>{current.user.name ?? current.user.email ?? 'Signed in'}</span>
          <Button onClick={() => void signOut()}>Sign out</Button>
        </>
      }
    >
      <WaitingForYou />
      {match ? match.route.render(match.params) : <Notice kind="error">This page does not exist.</Notice>}
    </Layout>
  );
}

setBase('/app');
render(<App />, document.getElementById('root')!);
