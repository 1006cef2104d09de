import { useEffect, useRef, useState } from 'preact/hooks';
import { formValues, ok, publicApi } from '../../shared/api';
import { Link, navigate, useLocation } from '../../shared/router';
import { Button, Field, Loading, Notice, PageTitle, useAction } from '../../shared/ui';
import { problemCode, ProblemNotice } from '../problem';
import { PRODUCT } from '../product';
import { session } from '../session';
import type { Account } from '../types';

/** Email and password; the code field appears when the API answers `mfa_required`. */
export function LogIn() {
  const { path, query } = useLocation();
  const [needsCode, setNeedsCode] = useState(false);
  const codeRef = useRef<HTMLDivElement>(null);
  const login = useAction(async (email: string, password: string, totp: string) => {
    try {
      const result = await ok(
        publicApi.POST('/v1/providers/auth/login', {
          body: { email, password, ...(totp ? { totp } : {}) },
        }),
      );
      session.set({ token: result.token, expiresAt: result.expires_at, email });
      // Stay on the deep link that asked for a login; the login page itself leads to the overview.
      if (['/login', '/signup', '/check-email', '/verify-email'].includes(path)) navigate('/', { replace: true });
    } catch (error) {
      if (problemCode(error) === 'mfa_required') setNeedsCode(true);
      throw error;
    }
  });
  useEffect(() => {
    if (needsCode) codeRef.current?.querySelector('input')?.focus();
  }, [needsCode]);
  return (
    <main id="main" class="narrow" tabIndex={-1}>
      <PageTitle product={PRODUCT}>Log in</PageTitle>
      {query.get('verified') === '1' && <Notice kind="success">Your email address is verified. Log in to continue.</Notice>}
      {query.get('reset') === '1' && <Notice kind="success">Your password is changed. Log in with the new password.</Notice>}
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
        {needsCode && (
          <div ref={codeRef}>
            <Field
              label="Authentication code"
              name="totp"
              inputMode="numeric"
              autoComplete="one-time-code"
              pattern="[0-9]{6}"
              hint="The 6-digit code from your authenticator app."
              required
            />
          </div>
        )}
        <ProblemNotice error={login.failure} />
        <Button type="submit" variant="primary" busy={login.busy}>
          Log in
        </Button>
      </form>
      <p>
        <Link href="/forgot-password">Forgot password?</Link>
      </p>
      <p>
        New here? <Link href="/signup">Create a developer account</Link>
      </p>
    </main>
  );
}

export function SignUp() {
  const signup = useAction(async (company_name: string, email: string, password: string) => {
    // The answer is the same whether or not the address already has an account; the mail tells its owner which.
    await ok(publicApi.POST('/v1/providers/account', { body: { company_name, email, password } }));
    navigate(`/check-email?email=${encodeURIComponent(email)}`);
  });
  return (
    <main id="main" class="narrow" tabIndex={-1}>
      <PageTitle product={PRODUCT}>Create a developer account</PageTitle>
      <form
        class="card"
        onSubmit={(event) => {
          event.preventDefault();
          const { company_name = '', email = '', password = '' } = formValues(event.currentTarget);
          void signup.run(company_name, email, password);
        }}
      >
        <Field label="Company name" name="company_name" autoComplete="organization" maxLength={200} required />
        <Field label="Email" name="email" type="email" autoComplete="email" required />
        <Field
          label="Password"
          name="password"
          type="password"
          autoComplete="new-password"
          minLength={12}
          hint="At least 12 characters, not containing your email address."
          required
        />
        <ProblemNotice error={signup.failure} />
        <Button type="submit" variant="primary" busy={signup.busy}>
          Create account
        </Button>
      </form>
      <p>
        Already have an account? <Link href="/login">Log in</Link>
      </p>
    </main>
  );
}

export function CheckEmail() {
  const { query } = useLocation();
  const email = query.get('email');
  return (
    <main id="main" class="narrow" tabIndex={-1}>
      <PageTitle product={PRODUCT}>Check your email</PageTitle>
      <div class="card">
        <p>
          We sent a message to {email ? <strong>{email}</strong> : 'your email address'}. For a new account it holds a verification link:
          open it within 24 hours. If the address already has an account, the message explains how to log in instead.
        </p>
        <p>
          No mail? <Link href="/login">Log in</Link> and send a new link from your account page; earlier links then stop working.
        </p>
      </div>
    </main>
  );
}

/** Target of the link in verification mails: `/console/verify-email?token=…`. */
export function VerifyEmail() {
  const { query } = useLocation();
  const token = query.get('token') ?? '';
  const [state, setState] = useState<{ done: boolean; error: unknown; account?: Account }>({ done: false, error: null });
  const started = useRef(false);
  useEffect(() => {
    // The token is single use: verify once per page load.
    if (started.current) return;
    started.current = true;
    if (!token) {
      setState({ done: true, error: new Error('This link has no verification token. Open the link from the email again.') });
      return;
    }
    ok(publicApi.POST('/v1/providers/account/verify', { body: { token } })).then(
      (account) => setState({ done: true, error: null, account }),
      (error: unknown) => setState({ done: true, error }),
    );
  }, [token]);
  const signedIn = session.get() !== null;
  return (
    <main id="main" class="narrow" tabIndex={-1}>
      <PageTitle product={PRODUCT}>{state.account ? 'Email verified' : 'Verify your email'}</PageTitle>
      <div class="card">
        {!state.done && <Loading label="Verifying your email address…" />}
        {state.account && (
          <>
            <Notice kind="success">{state.account.email} is verified. You can now register apps and packages.</Notice>
            {signedIn ? <Link href="/">Go to the console</Link> : <Link href="/login?verified=1">Log in</Link>}
          </>
        )}
        {state.error !== null && (
          <>
            <ProblemNotice error={state.error} />
            <p>
              {signedIn ? <Link href="/account">Send a new link from your account page</Link> : <Link href="/login">Log in</Link>} to
              request a new verification link.
            </p>
          </>
        )}
      </div>
    </main>
  );
}
