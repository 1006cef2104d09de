import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, formValues, ok, publicApi, type Schemas } from '../shared/api';
import { Button, Field, Notice, PageTitle } from '../shared/ui';
import { takeFarewell } from './pages/account';
import { PRODUCT } from './product';
import { session } from './session';

/** `GET /app/config.json`: how this service signs people in. */
type SignInConfig = Schemas['SignInConfigDto'];

const STATE_KEY = 'soul.app.signin.state';

/**
 * What a person reads when sign-in fails. The service's message names the
 * failed check ("firebase_token was rejected: malformed token"): useful to a
 * developer, so it goes to the console, never on the screen.
 */
export function signInErrorMessage(error: unknown): string {
  console.error('sign-in failed', error);
  if (error instanceof ApiFailure) {
    if (error.status === 0) return 'The service could not be reached. Check your connection and try again.';
    if (error.status === 401 || error.status === 400) return 'We could not sign you in with that account. Please try again.';
    if (error.status === 429) return 'Too many sign-in attempts from this network. Wait a minute and try again.';
    if (error.status >= 500) return 'Sign-in is unavailable for a moment. Please try again shortly.';
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'auth/popup-closed-by-user' || code === 'auth/cancelled-popup-request') return 'Sign-in was cancelled.';
  if (code === 'auth/popup-blocked') return 'The browser blocked the sign-in window. Allow pop-ups for this site and try again.';
  if (code === 'auth/invalid-email') return 'Enter a valid email address.';
  if (code === 'auth/invalid-action-code' || code === 'auth/expired-action-code') {
    return 'This sign-in link has expired or was already used. Ask for a new one.';
  }
  return 'Something went wrong while signing you in. Please try again.';
}

/** Exchanges an identity provider ID token for a service session (POST /v1/auth/login); the page stays where it is. */
async function exchange(idToken: string): Promise<void> {
  const result = await ok(publicApi.POST('/v1/auth/login', { body: { firebase_token: idToken } }));
  session.set({ token: result.token, expiresAt: result.expires_at, user: result.user });
}

function randomState(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

/** The ID token the development identity provider put in the fragment, once, checked against the state this tab sent. */
function takeReturnedToken(): string | null {
  if (!location.hash.includes('id_token=')) return null;
  const params = new URLSearchParams(location.hash.slice(1));
  // The token must not stay in the address bar or the history.
  history.replaceState(history.state, '', location.pathname + location.search);
  const expected = sessionStorage.getItem(STATE_KEY);
  sessionStorage.removeItem(STATE_KEY);
  const token = params.get('id_token');
  if (!token || !expected || params.get('state') !== expected) {
    console.error('sign-in: the returned state does not match the one this tab sent; ignoring the token');
    return null;
  }
  return token;
}

/**
 * The first screen: what the app is, and how to sign in here. Whatever page
 * was asked for (a deep link such as /app/contacts) is shown once signed in.
 */
export function SignIn() {
  const [config, setConfig] = useState<SignInConfig | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  // After an account deletion the page signs out and says what happened here.
  const [notice, setNotice] = useState<string | null>(takeFarewell);
  const [emailLinkPending, setEmailLinkPending] = useState(false);

  const attempt = async (work: () => Promise<void>) => {
    setBusy(true);
    setError(null);
    try {
      await work();
    } catch (failure) {
      setError(signInErrorMessage(failure));
    } finally {
      setBusy(false);
    }
  };

  useEffect(() => {
    const returned = takeReturnedToken();
    if (returned) void attempt(() => exchange(returned));
    ok(publicApi.GET('/app/config.json'))
      .then((loaded) => {
        setConfig(loaded);
        if (loaded.method === 'firebase' && loaded.firebase && /[?&]oobCode=/.test(location.search)) {
          const firebase = loaded.firebase;
          void attempt(async () => {
            const sdk = await import('./firebase-sign-in');
            if (!sdk.isEmailLink(firebase, location.href)) return;
            const email = sdk.rememberedEmail();
            if (!email) return setEmailLinkPending(true);
            const token = await sdk.completeEmailLink(firebase, email, location.href);
            history.replaceState(history.state, '', location.pathname);
            await exchange(token);
          });
        }
      })
      .catch((failure: unknown) => setError(signInErrorMessage(failure)));
  }, []);

  const developmentSignIn = (signInUrl: string) => {
    const state = randomState();
    sessionStorage.setItem(STATE_KEY, state);
    const query = new URLSearchParams({ redirect_uri: location.pathname + location.search, state });
    location.assign(`${signInUrl}?${query.toString()}`);
  };

  const firebase = config?.firebase;
  return (
    <main id="main" class="narrow">
      <PageTitle product={PRODUCT}>Sign in</PageTitle>
      <section class="card" aria-labelledby="welcome-heading">
        <h2 id="welcome-heading">Welcome to {PRODUCT}</h2>
        <p>
          {PRODUCT} keeps your contacts and conversations in one place, with an agent that drafts messages in your own voice and apps from
          the marketplace on your home page.
        </p>
        <p>
          <strong>First, sign in.</strong> The first time you sign in creates your account; then add a contact and start a conversation.
        </p>
      </section>
      <section class="card" aria-labelledby="sign-in-heading">
        <h2 id="sign-in-heading">Sign in</h2>
        {error && <Notice kind="error">{error}</Notice>}
        {notice && <Notice kind="success">{notice}</Notice>}
        {config === null && !error && <p role="status">Loading sign-in options…</p>}
        {config?.method === 'development' && config.development && (
          <>
            <p>This copy of {PRODUCT} runs in development mode: pick or create a test user on the development sign-in page.</p>
            <Button variant="primary" busy={busy} onClick={() => developmentSignIn(config.development!.sign_in_url)}>
              Sign in with a test user
            </Button>
          </>
        )}
        {config?.method === 'firebase' && firebase && !emailLinkPending && (
          <>
            <Button
              variant="primary"
              busy={busy}
              onClick={() =>
                void attempt(async () => {
                  const sdk = await import('./firebase-sign-in');
                  await exchange(await sdk.signInWithGoogle(firebase));
                })
              }
            >
              Continue with Google
            </Button>
            <form
              aria-label="Sign in with an email link"
              onSubmit={(event) => {
                event.preventDefault();
                const { email } = formValues(event.currentTarget);
                void attempt(async () => {
                  const sdk = await import('./firebase-sign-in');
                  await sdk.sendEmailLink(firebase, email ?? '', location.href);
                  setNotice(`We sent a sign-in link to ${email}. Open it in this browser to continue.`);
                });
              }}
            >
              <Field label="Email" name="email" type="email" required autoComplete="email" hint="Or get a sign-in link by email." />
              <Button type="submit" busy={busy}>
                Email me a sign-in link
              </Button>
            </form>
          </>
        )}
        {config?.method === 'firebase' && firebase && emailLinkPending && (
          <form
            aria-label="Confirm your email"
            onSubmit={(event) => {
              event.preventDefault();
              const { email } = formValues(event.currentTarget);
              void attempt(async () => {
                const sdk = await import('./firebase-sign-in');
                const token = await sdk.completeEmailLink(firebase, email ?? '', location.href);
                history.replaceState(history.state, '', location.pathname);
                setEmailLinkPending(false);
                await exchange(token);
              });
            }}
          >
            <Field label="Email" name="email" type="email" required autoComplete="email" hint="Confirm the address the link was sent to." />
            <Button type="submit" variant="primary" busy={busy}>
              Continue
            </Button>
          </form>
        )}
        {config?.method === 'token' && (
          <form
            onSubmit={(event) => {
              event.preventDefault();
              const token = formValues(event.currentTarget).id_token ?? '';
              void attempt(() => exchange(token));
            }}
          >
            <Field
              label="Identity provider token"
              name="id_token"
              multiline
              required
              hint="This service has no sign-in page configured: paste an ID token from its identity provider."
              autoComplete="off"
            />
            <Button type="submit" variant="primary" busy={busy}>
              Sign in
            </Button>
          </form>
        )}
      </section>
    </main>
  );
}
