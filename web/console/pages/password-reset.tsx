import type { Client } from 'openapi-fetch';
import { useEffect, useState } from 'preact/hooks';
import { formValues, ok, publicApi, type Schemas } from '../../shared/api';
import { Link, navigate, useLocation } from '../../shared/router';
import { Button, Field, Notice, PageTitle, useAction } from '../../shared/ui';
import { problemCode, ProblemNotice } from '../problem';
import { PRODUCT } from '../product';
import { session } from '../session';

type Json<T> = { headers: Record<string, unknown>; content: { 'application/json': T } };
type Problem = { headers: Record<string, unknown>; content: { 'application/problem+json': Schemas['ProblemDetailsDto'] } };
type NoParameters = { query?: never; header?: never; path?: never; cookie?: never };
interface Answer {
  email: string;
  message: string;
}

/**
 * The two reset routes as the OpenAPI document describes them. Until the generated paths
 * (packages/api-client/src/api-schema.d.ts, `npm run api:generate`) include them, this typed view of the
 * same client stands in; afterwards `publicApi` serves them directly.
 */
interface ResetPaths {
  '/v1/providers/account/password/reset': {
    parameters: NoParameters;
    post: { parameters: NoParameters; requestBody: Json<{ email: string }>; responses: { 202: Json<Answer>; 400: Problem; 429: Problem } };
  };
  '/v1/providers/account/password/reset/confirm': {
    parameters: NoParameters;
    post: {
      parameters: NoParameters;
      requestBody: Json<{ token: string; password: string }>;
      responses: { 200: Json<Answer>; 400: Problem; 403: Problem; 429: Problem };
    };
  };
}
const resetApi = publicApi as unknown as Client<ResetPaths>;

/** The form gave way to its answer: focus goes to the main region, as after a page change, so screen readers read the answer. */
function focusMain(): void {
  document.getElementById('main')?.focus({ preventScroll: true });
}

/** "Forgot password?": asks for a reset link. The answer is the same whether or not the address has an account. */
export function ForgotPassword() {
  const [sent, setSent] = useState<Answer | null>(null);
  const ask = useAction(async (email: string) => {
    setSent(await ok(resetApi.POST('/v1/providers/account/password/reset', { body: { email } })));
  });
  useEffect(() => {
    if (sent) focusMain();
  }, [sent]);
  return (
    <main id="main" class="narrow" tabIndex={-1}>
      <PageTitle product={PRODUCT}>Reset your password</PageTitle>
      {sent ? (
        <div class="card">
          <Notice kind="success">{sent.message}</Notice>
          <p>No mail after a few minutes? Check the spam folder, or ask again: a newer link replaces the older ones.</p>
          <Button onClick={() => setSent(null)}>Send another link</Button>
        </div>
      ) : (
        <form
          class="card"
          onSubmit={(event) => {
            event.preventDefault();
            const { email = '' } = formValues(event.currentTarget);
            void ask.run(email);
          }}
        >
          <p>Enter the email address of your developer account. We will send it a link to choose a new password, valid for one hour.</p>
          <Field label="Email" name="email" type="email" autoComplete="username" maxLength={254} required />
          <ProblemNotice error={ask.failure} />
          <Button type="submit" variant="primary" busy={ask.busy}>
            Email me a reset link
          </Button>
        </form>
      )}
      <p>
        Remembered it? <Link href="/login">Log in</Link>
      </p>
    </main>
  );
}

/** Target of the link in reset mails: `/console/reset-password?token=…`. A new password, twice. */
export function ResetPassword() {
  const { query } = useLocation();
  // Kept in memory only: the address bar, the history and any Referer lose the token at once.
  const [token] = useState(() => query.get('token') ?? '');
  useEffect(() => {
    if (query.get('token')) navigate('/reset-password', { replace: true });
  }, []);
  const [mismatch, setMismatch] = useState<string | null>(null);
  const [done, setDone] = useState<Answer | null>(null);
  const reset = useAction(async (password: string) => {
    const answer = await ok(resetApi.POST('/v1/providers/account/password/reset/confirm', { body: { token, password } }));
    // Every console session of the account ended with the reset, this browser's too.
    session.set(null);
    setDone(answer);
  });
  useEffect(() => {
    if (done) focusMain();
  }, [done]);
  const linkUnusable = problemCode(reset.failure) === 'invalid_reset_token';

  if (!token) {
    return (
      <main id="main" class="narrow" tabIndex={-1}>
        <PageTitle product={PRODUCT}>Choose a new password</PageTitle>
        <div class="card">
          <Notice kind="error">This page needs the link from the reset email. Open the link again, or request a new one.</Notice>
          <Link href="/forgot-password">Request a new reset link</Link>
        </div>
      </main>
    );
  }
  return (
    <main id="main" class="narrow" tabIndex={-1}>
      <PageTitle product={PRODUCT}>Choose a new password</PageTitle>
      {done ? (
        <div class="card">
          <Notice kind="success">{done.message}</Notice>
          <Link href="/login?reset=1">Log in</Link>
        </div>
      ) : (
        <form
          class="card"
          onSubmit={(event) => {
            event.preventDefault();
            const { password = '', repeat = '' } = formValues(event.currentTarget);
            if (password !== repeat) {
              setMismatch('The two passwords differ; type the same new password twice.');
              event.currentTarget.querySelector<HTMLInputElement>('input[name="repeat"]')?.focus();
              return;
            }
            setMismatch(null);
            void reset.run(password);
          }}
        >
          <Field
            label="New password"
            name="password"
            type="password"
            autoComplete="new-password"
            minLength={12}
            maxLength={256}
            hint="At least 12 characters, not containing your email address."
            required
          />
          <Field
            label="Repeat the new password"
            name="repeat"
            type="password"
            autoComplete="new-password"
            minLength={12}
            maxLength={256}
            error={mismatch}
            required
          />
          <ProblemNotice error={reset.failure} />
          {linkUnusable && (
            <p>
              <Link href="/forgot-password">Request a new reset link</Link>
            </p>
          )}
          <Button type="submit" variant="primary" busy={reset.busy}>
            Set the new password
          </Button>
        </form>
      )}
    </main>
  );
}
