import { ok } from '../../shared/api';
import { Link } from '../../shared/router';
import { Loaded, PageTitle, useResource } from '../../shared/ui';
import { Section } from '../components';
import { PRODUCT } from '../product';
import { api } from '../session';
import type { Account, App, Package } from '../types';
import { loadAccount, ResendVerification } from './account';

export function OverviewPage() {
  const data = useResource(async () => {
    const account = await loadAccount();
    if (!account.email_verified) return { account, apps: [] as App[], packages: [] as Package[] };
    const [apps, packages] = await Promise.all([
      ok(api.GET('/v1/providers/apps')).then((r) => r.apps),
      ok(api.GET('/v1/providers/packages')).then((r) => r.packages),
    ]);
    return { account, apps, packages };
  }, []);
  return (
    <>
      <PageTitle product={PRODUCT}>Overview</PageTitle>
      <Loaded resource={data}>
        {({ account, apps, packages }: { account: Account; apps: App[]; packages: Package[] }) => (
          <>
            <p>
              Signed in as <strong>{account.email}</strong> for {account.company_name}.
            </p>
            {!account.email_verified && <ResendVerification email={account.email} />}
            <Section title="Getting started">
              <ol class="steps">
                <li>{account.email_verified ? 'Email address verified.' : 'Verify your email address with the link we sent.'}</li>
                <li>
                  {account.mfa_enabled ? (
                    'Two-factor authentication is on.'
                  ) : (
                    <>
                      Turn on two-factor authentication on your <Link href="/account">account page</Link>.
                    </>
                  )}
                </li>
                <li>
                  <Link href="/apps">Apps</Link>: {apps.length === 0 ? 'register your first app' : `${apps.length} registered`}.
                </li>
                <li>
                  <Link href="/packages">Packages</Link>:{' '}
                  {packages.length === 0
                    ? 'create a package, validate it, submit it and publish it'
                    : `${packages.length} created, ${packages.filter((p) => p.publishedVersionId).length} published`}
                  .
                </li>
              </ol>
            </Section>
          </>
        )}
      </Loaded>
    </>
  );
}
