import './waiting-for-you.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { describeError, ok, type Schemas } from '../shared/api';
import { Button, formatDate, Notice } from '../shared/ui';
import { GatewayFrame, useGatewayEvents } from './gateway';
import { api } from './session';
import { isObject } from '../shared/json';
import { display, humanise } from './widgets';

/**
 * What waits for the user's decision, on every page of the app: actions an
 * app acting for the user asks to carry out, installs whose
 * runtime needs them to re-authorize, and published versions that can do more
 * and need their consent. New ones arrive live (`action.pending`,
 * `install.updated`); nothing is shown when nothing waits.
 */
type PendingAction = Schemas['ActionConfirmationDto'];

type InstallState = Schemas['InstallDto'];

const MODE_WORDS: Record<string, string> = {
  state: 'show current data',
  action: 'do things for you after you confirm',
  history: 'list past activity',
  realtime: 'stream live data',
  webhook: 'send you updates as they happen',
};

/** The user's own actions are asked about in the dialog of the widget that started them; an app has no screen to ask on. */
const startedByApp = (action: PendingAction) => action.startedBy === 'app';

const byOldest = (a: PendingAction, b: PendingAction) => a.expiresAt.localeCompare(b.expiresAt);

export function WaitingForYou() {
  const [actions, setActions] = useState<PendingAction[]>([]);
  const [installs, setInstalls] = useState<InstallState[]>([]);
  const [busy, setBusy] = useState<string | null>(null);
  const [notice, setNotice] = useState<{ kind: 'success' | 'info' | 'error'; text: string } | null>(null);
  const heading = useRef<HTMLHeadingElement>(null);

  const loadActions = async () => {
    try {
      const list = await ok(api.GET('/v1/actions/pending'));
      setActions(list.confirmations.filter(startedByApp));
    } catch {
      // The page itself reports a failing service; this panel stays quiet.
    }
  };
  const loadInstalls = async () => {
    try {
      const list = await ok(api.GET('/v1/installs'));
      setInstalls(list.installs.filter((i) => i.reauthorization_required || i.upgrade));
    } catch {
      // As above.
    }
  };

  useEffect(() => {
    void loadActions();
    void loadInstalls();
    // A confirmation lapses after 15 minutes: drop the lapsed ones from time to time.
    const timer = setInterval(() => setActions((all) => all.filter((a) => Date.parse(a.expiresAt) > Date.now())), 30_000);
    return () => clearInterval(timer);
  }, []);

  useGatewayEvents(
    ['action.pending'],
    (frame: GatewayFrame) => {
      const data = frame.data;
      if (!isObject(data) || typeof data.confirmationId !== 'string') return;
      const action = data as unknown as PendingAction;
      if (!startedByApp(action)) return;
      setActions((all) => (all.some((a) => a.confirmationId === action.confirmationId) ? all : [...all, action].sort(byOldest)));
    },
    [],
  );
  // Decided in another session (or in a widget's own confirmation dialog): no longer waiting.
  useGatewayEvents(
    ['action.decided'],
    (frame: GatewayFrame) => {
      const id = frame.data?.confirmationId;
      if (typeof id === 'string') setActions((all) => all.filter((a) => a.confirmationId !== id));
    },
    [],
  );
  // The frame carries the install as it is now (it is sent as the change commits, so a read at that instant may miss it).
  useGatewayEvents(
    ['install.updated'],
    (frame: GatewayFrame) => {
      const install = frame.data?.install;
      if (!isObject(install) || typeof install.id !== 'string') return;
      const next = install as unknown as InstallState;
      setInstalls((all) => {
        const others = all.filter((i) => i.id !== next.id);
        return next.reauthorization_required || next.upgrade ? [...others, next] : others;
      });
    },
    [],
  );
  // On a reconnect, catch up with what arrived while offline.
  useGatewayEvents(
    ['ready'],
    () => {
      void loadActions();
      void loadInstalls();
    },
    [],
  );

  const afterDecision = (text: string, kind: 'success' | 'info' | 'error') => setNotice({ kind, text });
  // The button that had focus is gone after a decision: keep keyboard users in the panel, on its heading.
  useEffect(() => {
    if (notice) heading.current?.focus();
  }, [notice]);

  const decide = async (action: PendingAction, decision: 'confirm' | 'cancel') => {
    const title = humanise(action.capability);
    setBusy(action.confirmationId);
    try {
      const answer = await ok(
        api.POST(decision === 'confirm' ? '/v1/actions/{confirmation_id}/confirm' : '/v1/actions/{confirmation_id}/cancel', {
          params: { path: { confirmation_id: action.confirmationId } },
        }),
      );
      setActions((all) => all.filter((a) => a.confirmationId !== action.confirmationId));
      if (decision === 'cancel') afterDecision(`${title} declined. Nothing was sent to ${action.packageName ?? 'the package'}.`, 'info');
      else afterDecision(answer.message || `${title} approved and done.`, 'success');
    } catch (failure) {
      // Decided elsewhere meanwhile (another session), lapsed, or failed at the provider: show why and refresh the list.
      await loadActions();
      afterDecision(`${title}: ${describeError(failure)}`, 'error');
    } finally {
      setBusy(null);
    }
  };

  const consent = async (install: InstallState, what: string) => {
    setBusy(install.id);
    try {
      await ok(api.POST('/v1/installs', { body: { package_id: install.package_id } }));
      setInstalls((all) => all.filter((i) => i.id !== install.id));
      afterDecision(`${install.package_name} ${what}.`, 'success');
    } catch (failure) {
      afterDecision(`${install.package_name}: ${describeError(failure)}`, 'error');
    } finally {
      setBusy(null);
    }
  };

  if (actions.length === 0 && installs.length === 0 && !notice && !busy) return null;
  return (
    <section class="card waiting" aria-labelledby="waiting-heading">
      <h2 id="waiting-heading" ref={heading} tabIndex={-1}>
        Waiting for you
      </h2>
      {notice && <Notice kind={notice.kind}>{notice.text}</Notice>}
      {actions.length === 0 && installs.length === 0 && <p class="muted">Nothing else is waiting for your decision.</p>}
      {actions.length > 0 && (
        <ul class="waiting-list" aria-label="Actions waiting for your decision">
          {actions.map((action) => {
            const title = humanise(action.capability);
            const who = action.packageName ?? 'A package';
            const id = `pending-${action.confirmationId}`;
            return (
              <li key={action.confirmationId} aria-labelledby={id}>
                <h3 id={id}>
                  {who} asks to: {title}
                </h3>
                {Object.keys(action.input ?? {}).length > 0 && (
                  <dl class="result-list">
                    {Object.entries(action.input).map(([key, value]) => (
                      <div key={key}>
                        <dt>{humanise(key)}</dt>
                        <dd>{display(value)}</dd>
                      </div>
                    ))}
                  </dl>
                )}
                <p class="muted">Nothing happens until you approve. This request lapses at {formatDate(action.expiresAt)}.</p>
                <div class="actions">
                  <Button
                    variant="primary"
                    busy={busy === action.confirmationId}
                    aria-label={`Approve: ${title} (${who})`}
                    onClick={() => void decide(action, 'confirm')}
                  >
                    Approve
                  </Button>
                  <Button
                    disabled={busy === action.confirmationId}
                    aria-label={`Decline: ${title} (${who})`}
                    onClick={() => void decide(action, 'cancel')}
                  >
                    Decline
                  </Button>
                </div>
              </li>
            );
          })}
        </ul>
      )}
      {installs.length > 0 && (
        <ul class="waiting-list" aria-label="Packages waiting for your consent">
          {installs.map((install) =>
            install.reauthorization_required ? (
              <li key={install.id}>
                <p>
                  <strong>{install.package_name}</strong> can no longer reach your account at its provider. Re-authorize it to use it again.
                </p>
                <Button variant="primary" busy={busy === install.id} onClick={() => void consent(install, 'is authorized again')}>
                  Re-authorize {install.package_name}
                </Button>
              </li>
            ) : (
              <li key={install.id}>
                <p>
                  <strong>{install.package_name}</strong> {install.upgrade!.version} can also{' '}
                  {install.upgrade!.new_capability_modes.map((mode) => MODE_WORDS[mode] ?? humanise(mode)).join(', ')}. You are on version{' '}
                  {install.version} until you allow it.
                </p>
                <Button
                  variant="primary"
                  busy={busy === install.id}
                  onClick={() => void consent(install, `is updated to ${install.upgrade!.version}`)}
                >
                  Allow and update {install.package_name}
                </Button>
              </li>
            ),
          )}
        </ul>
      )}
    </section>
  );
}
