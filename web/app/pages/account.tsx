import { useState } from 'preact/hooks';
import { ok, type Schemas } from '../../shared/api';
import { Button, ConfirmDialog, EmptyState, Field, formatDate, Loaded, Notice, PageTitle, useAction, useResource } from '../../shared/ui';
import { PRODUCT } from '../product';
import { api, session } from '../session';

type Session = Schemas['SessionDto'];

/** Sessions shown at once; a person rarely has more, and "Show more" pages on. */
const PAGE = 50;
/** Where the sign-in screen finds what to tell the person after their account was deleted (this tab only). */
const FAREWELL_KEY = 'soul.app.farewell';
const FAREWELL =
  'Your account is being deleted: you were signed out everywhere, and everything personal we held about you is being erased. ' +
  'Signing in again creates a new, empty account.';

/** The message left for the sign-in screen by an account deletion, taken once. */
export function takeFarewell(): string | null {
  try {
    const message = sessionStorage.getItem(FAREWELL_KEY);
    sessionStorage.removeItem(FAREWELL_KEY);
    return message;
  } catch {
    return null;
  }
}

function leaveFarewell(message: string): void {
  try {
    sessionStorage.setItem(FAREWELL_KEY, message);
  } catch {
    /* storage unavailable: the page signs out without the message */
  }
}

function SessionItem(props: { session: Session; onSignOut: (session: Session) => void }) {
  const { session: s } = props;
  return (
    <li class="card session">
      <h3>
        {s.client.description} {s.current && <span class="badge badge-good">This browser</span>}
      </h3>
      <dl class="session-facts">
        <dt>Signed in</dt>
        <dd>{formatDate(s.created_at)}</dd>
        <dt>Last used</dt>
        <dd>{formatDate(s.last_used_at)}</dd>
        <dt>Address</dt>
        <dd>{s.client.ip_address ?? '—'}</dd>
      </dl>
      <Button onClick={() => props.onSignOut(s)} aria-label={`Sign out ${s.client.description}${s.current ? ' (this browser)' : ''}`}>
        Sign out
      </Button>
    </li>
  );
}

/** The user's live sessions: each can be signed out, or all at once. */
function SessionsPanel() {
  // Pages shown beyond the first ("Show more"); a reload after a sign-out reads them all again.
  const [morePages, setMorePages] = useState(0);
  const list = useResource(async () => {
    const first = await ok(api.GET('/v1/sessions', { params: { query: { limit: PAGE } } }));
    const sessions = [...first.sessions];
    let cursor = first.next_cursor;
    for (let page = 0; page < morePages && cursor; page++) {
      const next = await ok(api.GET('/v1/sessions', { params: { query: { limit: PAGE, cursor } } }));
      sessions.push(...next.sessions);
      cursor = next.next_cursor;
    }
    return { sessions, next_cursor: cursor };
  }, [morePages]);
  const [target, setTarget] = useState<Session | null>(null);
  const [everywhere, setEverywhere] = useState<'others' | 'all' | null>(null);
  const [done, setDone] = useState<string | null>(null);

  const signOutOne = useAction(async (s: Session) => {
    await ok(api.DELETE('/v1/sessions/{session_id}', { params: { path: { session_id: s.id } } }));
    setTarget(null);
    if (s.current) return session.set(null);
    setDone(`Signed out ${s.client.description}.`);
    list.reload();
  });
  const signOutAll = useAction(async (scope: 'others' | 'all') => {
    const result = await ok(
      api.POST('/v1/sessions/revoke-all', { params: { query: { keep_current: scope === 'others' ? 'true' : 'false' } } }),
    );
    setEverywhere(null);
    if (scope === 'all') return session.set(null);
    setDone(`Signed out ${result.revoked} other session${result.revoked === 1 ? '' : 's'}.`);
    list.reload();
  });

  return (
    <section aria-labelledby="sessions-heading">
      <h2 id="sessions-heading">Where you are signed in</h2>
      <p class="muted">Each sign-in lasts an hour. Signing a session out ends it at once, in every tab and on every device that uses it.</p>
      {done && <Notice kind="success">{done}</Notice>}
      <Loaded resource={list}>
        {(data) =>
          data.sessions.length === 0 ? (
            <EmptyState>No live sessions.</EmptyState>
          ) : (
            <>
              <ul class="plain-list session-list" aria-label="Sessions">
                {data.sessions.map((s) => (
                  <SessionItem key={s.id} session={s} onSignOut={(chosen) => setTarget(chosen)} />
                ))}
              </ul>
              {data.next_cursor && (
                <p>
                  <Button onClick={() => setMorePages(morePages + 1)}>Show more sessions</Button>
                </p>
              )}
            </>
          )
        }
      </Loaded>
      <div class="actions session-actions">
        <Button onClick={() => setEverywhere('others')}>Sign out all other sessions…</Button>
        <Button variant="danger" onClick={() => setEverywhere('all')}>
          Sign out everywhere…
        </Button>
      </div>
      <ConfirmDialog
        open={target !== null}
        title={target?.current ? 'Sign out of this browser?' : `Sign out ${target?.client.description ?? 'this session'}?`}
        confirmLabel="Sign out"
        busy={signOutOne.busy}
        error={signOutOne.error}
        onConfirm={() => target && void signOutOne.run(target)}
        onCancel={() => setTarget(null)}
      >
        <p>
          {target?.current
            ? 'You will need to sign in again here.'
            : 'Whoever uses that session is signed out at once and needs to sign in again.'}
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={everywhere !== null}
        title={everywhere === 'all' ? 'Sign out everywhere?' : 'Sign out all other sessions?'}
        confirmLabel={everywhere === 'all' ? 'Sign out everywhere' : 'Sign out other sessions'}
        danger={everywhere === 'all'}
        busy={signOutAll.busy}
        error={signOutAll.error}
        onConfirm={() => everywhere && void signOutAll.run(everywhere)}
        onCancel={() => setEverywhere(null)}
      >
        <p>
          {everywhere === 'all'
            ? 'Every session ends at once, this browser included. You will need to sign in again everywhere.'
            : 'Every session but this browser ends at once.'}
        </p>
      </ConfirmDialog>
    </section>
  );
}

/** `DELETE /v1/me`, behind a dialog that asks the person to type DELETE, as GitHub asks for the account name. */
function DeleteAccountPanel() {
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  const remove = useAction(async () => {
    if (typed.trim() !== 'DELETE') throw new Error('Type DELETE in capital letters to confirm.');
    // Left before the request: the revoked session's socket may sign the page out before the answer arrives.
    leaveFarewell(FAREWELL);
    try {
      await ok(api.DELETE('/v1/me', { body: { confirm: 'DELETE' } }));
    } catch (failure) {
      takeFarewell();
      throw failure;
    }
    session.set(null);
  });
  const close = () => {
    setOpen(false);
    setTyped('');
    remove.setError(null);
  };
  return (
    <section class="card danger-zone" aria-labelledby="delete-account-heading">
      <h2 id="delete-account-heading">Delete your account</h2>
      <p>
        Signs you out everywhere and erases everything the service holds about you: your soul record, contacts, groups, the messages you
        sent, exports, agent actions and installed packages. Messages others sent you stay with them. This cannot be undone.
      </p>
      <Button variant="danger" onClick={() => setOpen(true)}>
        Delete my account…
      </Button>
      <ConfirmDialog
        open={open}
        title="Delete your account permanently?"
        confirmLabel="Delete my account"
        danger
        busy={remove.busy}
        error={remove.error}
        onConfirm={() => void remove.run()}
        onCancel={close}
      >
        <p>
          <strong>This is permanent and cannot be undone.</strong> Everything personal is erased and the packages you installed are told you
          left. Signing in again later creates a new, empty account.
        </p>
        <Field
          label="Type DELETE to confirm"
          name="confirm"
          autoComplete="off"
          value={typed}
          onInput={(event) => setTyped(event.currentTarget.value)}
        />
      </ConfirmDialog>
    </section>
  );
}

export function AccountPage() {
  return (
    <>
      <PageTitle product={PRODUCT}>Account</PageTitle>
      <SessionsPanel />
      <DeleteAccountPanel />
    </>
  );
}
