import { render } from 'preact';
import '../shared/styles.css';
import './app.css';
import { formValues, request } from '../shared/api';
import { matchRoute, navigate, Route, setBase, useLocation } from '../shared/router';
import { useSession } from '../shared/session';
import { Button, Field, Layout, Notice, PageTitle, useAction } from '../shared/ui';
import { session, UserSession } from './session';

const PRODUCT = 'Soul';

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

const ROUTES: Route[] = [{ path: '/', render: () => <PageTitle product={PRODUCT}>Home</PageTitle> }];

const NAV = [{ href: '/', label: 'Home' }];

function App() {
  const current = useSession(session);
  const { path } = useLocation();
  if (!current) return <SignIn />;
  const match = matchRoute(ROUTES, path);
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
