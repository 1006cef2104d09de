import { render } from 'preact';
import '../shared/styles.css';
import './console.css';
import { formValues, request } from '../shared/api';
import { matchRoute, navigate, Route, setBase, useLocation } from '../shared/router';
import { useSession } from '../shared/session';
import { Button, Field, Layout, Notice, PageTitle, useAction } from '../shared/ui';
import { session } from './session';

const PRODUCT = 'Developer console';

function LogIn() {
  const login = useAction(async (email: string, password: string, totp: string) => {
    const result = await request<{ token: string; expires_at: string }>('POST', '/v1/providers/auth/login', {
      body: { email, password, ...(totp ? { totp } : {}) },
    });
    session.set({ token: result.token, expiresAt: result.expires_at, email });
    navigate('/', { replace: true });
  });
  return (
    <main id="main" class="narrow">
      <PageTitle product={PRODUCT}>Log in</PageTitle>
      <form
        class="card"
        onSubmit={(event) => {
          event.preventDefault();
          const { email = '', password = '', totp = '' } = formValues(event.currentTarget);
          void login.run(email, password, totp);
        }}
      >
        <Field label="Email" name="email" type="email" autoComplete="username" required />
        <Field label="Password" name="password" type="password" autoComplete="current-password" required />
        <Field label="Authentication code" name="totp" inputMode="numeric" autoComplete="one-time-code" hint="Only when MFA is on." />
        {login.error && <Notice kind="error">{login.error}</Notice>}
        <Button type="submit" variant="primary" busy={login.busy}>
          Log in
        </Button>
      </form>
    </main>
  );
}

const ROUTES: Route[] = [{ path: '/', render: () => <PageTitle product={PRODUCT}>Overview</PageTitle> }];
const NAV = [{ href: '/', label: 'Overview' }];

function Console() {
  const current = useSession(session);
  const { path } = useLocation();
  if (!current) return <LogIn />;
  const match = matchRoute(ROUTES, path);
  const logOut = async () => {
    await request('POST', '/v1/providers/auth/logout', { token: current.token }).catch(() => undefined);
    session.set(null);
  };
  return (
    <Layout
      product={PRODUCT}
      nav={NAV}
      account={
        <>
          <span>{current.email}</span>
          <Button onClick={() => void logOut()}>Log out</Button>
        </>
      }
    >
      {match ? match.route.render(match.params) : <Notice kind="error">This page does not exist.</Notice>}
    </Layout>
  );
}

setBase('/console');
render(<Console />, document.getElementById('root')!);
