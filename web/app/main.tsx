import { render } from 'preact';
import '../shared/styles.css';
import './app.css';
import { formValues, request } from '../shared/api';
import { matchRoute, navigate, Route, setBase, useLocation } from '../shared/router';
import { useSession } from '../shared/session';
import { Button, Field, Layout, Notice, PageTitle, useAction } from '../shared/ui';
import { gateway, useConnectionState } from './gateway';
import { AgentPage } from './pages/agent';
import { ContactsPage } from './pages/contacts';
import { ConversationPage } from './pages/conversation';
import { GroupsPage } from './pages/groups';
import { HomePage } from './pages/home';
import { MarketplacePage, PackagePage } from './pages/marketplace';
import { SoulPage } from './pages/soul';
import { PRODUCT } from './product';
import { session, UserSession } from './session';
import { useEffect } from 'preact/hooks';

/**
 * Development sign-in: the page accepts an ID token from the identity
 * provider (in production the provider's own sign-in widget obtains it) and
 * exchanges it at POST /v1/auth/login for a service token.
 */
function SignIn() {
  const login = useAction(async (idToken: string) => {
    const result = await request<{ token: string; expires_at: string; user: UserSession['user'] }>('POST', '/v1/auth/login', {
      body: { firebase_token: idToken },
    });
    session.set({ token: result.token, expiresAt: result.expires_at, user: result.user });
    navigate('/', { replace: true });
  });
  return (
    <main id="main" class="narrow">
      <PageTitle product={PRODUCT}>Sign in</PageTitle>
      <form
        class="card"
        onSubmit={(event) => {
          event.preventDefault();
          void login.run(formValues(event.currentTarget).id_token ?? '');
        }}
      >
        <Field
          label="Identity provider token"
          name="id_token"
          multiline
          required
          hint="Paste the ID token issued by your identity provider (development sign-in)."
          autoComplete="off"
        />
        {login.error && <Notice kind="error">{login.error}</Notice>}
        <Button type="submit" variant="primary" busy={login.busy}>
          Sign in
        </Button>
      </form>
    </main>
  );
}

const ROUTES: Route[] = [
  { path: '/', render: () => <HomePage /> },
  { path: '/contacts', render: () => <ContactsPage /> },
  { path: '/contacts/:contactId', render: (p) => <ConversationPage contactId={p.contactId} /> },
  { path: '/groups', render: () => <GroupsPage /> },
  { path: '/marketplace', render: () => <MarketplacePage /> },
  { path: '/marketplace/:slug', render: (p) => <PackagePage slug={p.slug} /> },
  { path: '/soul', render: () => <SoulPage /> },
  { path: '/agent', render: () => <AgentPage /> },
];

const NAV = [
  { href: '/', label: 'Home' },
  { href: '/contacts', label: 'Contacts' },
  { href: '/groups', label: 'Groups' },
  { href: '/marketplace', label: 'Marketplace' },
  { href: '/soul', label: 'Soul' },
  { href: '/agent', label: 'Agent' },
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
    await request('POST', '/v1/auth/logout', { token: current.token }).catch(() => undefined);
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
      {match ? match.route.render(match.params) : <Notice kind="error">This page does not exist.</Notice>}
    </Layout>
  );
}

setBase('/app');
render(<App />, document.getElementById('root')!);
