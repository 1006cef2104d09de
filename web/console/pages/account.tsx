import { useState } from 'preact/hooks';
import { formValues, ok } from '../../shared/api';
import { Button, Field, formatDate, Loaded, Notice, PageTitle, useResource, useAction } from '../../shared/ui';
import { Facts, Section } from '../components';
import { ProblemNotice } from '../problem';
import { PRODUCT } from '../product';
import { api } from '../session';
import type { Account } from '../types';

export function loadAccount(): Promise<Account> {
  return ok(api.GET('/v1/providers/account'));
}

export function AccountPage() {
  const account = useResource(loadAccount, []);
  return (
    <>
      <PageTitle product={PRODUCT}>Account</PageTitle>
      <Loaded resource={account}>
        {(data) => (
          <>
            <Section title="Developer account">
              <Facts
                items={[
                  ['Company', data.company_name],
                  ['Email', data.email],
                  ['Email verified', data.email_verified ? `Yes, ${formatDate(data.email_verified_at)}` : 'Not yet'],
                  ['Two-factor authentication', data.mfa_enabled ? 'On' : 'Off'],
                  ['Created', formatDate(data.created_at)],
                ]}
              />
            </Section>
            {!data.email_verified && <ResendVerification email={data.email} />}
            <MfaSection account={data} onEnabled={account.setData} />
          </>
        )}
      </Loaded>
    </>
  );
}

export function ResendVerification(props: { email: string }) {
  const [sent, setSent] = useState(false);
  const resend = useAction(async () => {
    await ok(api.POST('/v1/providers/account/verify/resend'));
    setSent(true);
  });
  return (
    <Section title="Verify your email address">
      <p>
        Apps and packages need a verified address. We sent a link to {props.email}; it works for 24 hours. A new link replaces the earlier
        ones.
      </p>
      {sent && <Notice kind="success">A new verification link is on its way to {props.email}.</Notice>}
      <ProblemNotice error={resend.failure} />
      <Button onClick={() => void resend.run()} busy={resend.busy}>
        Send a new verification link
      </Button>
    </Section>
  );
}

function MfaSection(props: { account: Account; onEnabled: (account: Account) => void }) {
  const [enrolment, setEnrolment] = useState<{ secret: string; otpauth_uri: string } | null>(null);
  const [enabledNow, setEnabledNow] = useState(false);
  const start = useAction(async () => {
    setEnrolment(await ok(api.POST('/v1/providers/account/mfa')));
  });
  const confirm = useAction(async (code: string) => {
    const account = await ok(api.POST('/v1/providers/account/mfa/confirm', { body: { code } }));
    setEnrolment(null);
    setEnabledNow(true);
    props.onEnabled(account);
  });
  return (
    <Section title="Two-factor authentication">
      {enabledNow && (
        <Notice kind="success">Two-factor authentication is on. From now on, logging in asks for a code from your app.</Notice>
      )}
      {props.account.mfa_enabled && !enabledNow && <p>Two-factor authentication is on for this account.</p>}
      {!props.account.mfa_enabled && !enrolment && (
        <>
          <p>Protect the account with a time-based code (TOTP) from an authenticator app in addition to the password.</p>
          <ProblemNotice error={start.failure} />
          <Button variant="primary" onClick={() => void start.run()} busy={start.busy}>
            Set up two-factor authentication
          </Button>
        </>
      )}
      {enrolment && (
        <>
          <ol>
            <li>
              Add this key to your authenticator app (or open the setup address on a device that has one). It is shown only now.
              <Facts
                items={[
                  [
                    'Setup key',
                    <code class="break" key="secret">
                      {enrolment.secret}
                    </code>,
                  ],
                  [
                    'Setup address (otpauth URI)',
                    <code class="break" key="uri">
                      {enrolment.otpauth_uri}
                    </code>,
                  ],
                ]}
              />
            </li>
            <li>Enter the 6-digit code the app shows to turn it on.</li>
          </ol>
          <form
            onSubmit={(event) => {
              event.preventDefault();
              void confirm.run(formValues(event.currentTarget).code ?? '');
            }}
          >
            <Field label="Code from your app" name="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9]{6}" required />
            <ProblemNotice error={confirm.failure} />
            <Button type="submit" variant="primary" busy={confirm.busy}>
              Turn on two-factor authentication
            </Button>
          </form>
        </>
      )}
    </Section>
  );
}
