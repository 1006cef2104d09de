import type { ButtonHTMLAttributes, ComponentChildren, InputHTMLAttributes, TextareaHTMLAttributes } from 'preact';
import { useCallback, useEffect, useId, useRef, useState } from 'preact/hooks';
import { describeError } from './api';
import { Link, useLocation } from './router';

/** Loads data once per change of `deps`; `reload` fetches again. Stale answers are dropped. */
export function useResource<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({ loading: true });
  const generation = useRef(0);
  const reload = useCallback(() => {
    const mine = ++generation.current;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => mine === generation.current && setState({ data, loading: false }),
      (error: unknown) => mine === generation.current && setState({ error: describeError(error), loading: false }),
    );
  }, deps);
  useEffect(reload, [reload]);
  return { ...state, reload, setData: (data: T) => setState({ data, loading: false }) };
}

/**
 * Runs one user action at a time. It keeps the action's failure whole (`failure`, for the console's `ProblemNotice`,
 * which shows where in the request a refusal applies) and as text (`error`, for a plain notice).
 */
export function useAction<A extends unknown[], R>(action: (...args: A) => Promise<R>) {
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<unknown>(null);
  const run = async (...args: A): Promise<R | undefined> => {
    if (busy) return undefined;
    setBusy(true);
    setFailure(null);
    try {
      return await action(...args);
    } catch (caught) {
      setFailure(caught);
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { busy, failure, error: failure === null ? null : describeError(failure), run, setError: setFailure };
}

export interface NavItem {
  href: string;
  label: string;
}

export function Layout(props: { product: string; nav: NavItem[]; account?: ComponentChildren; children: ComponentChildren }) {
  const { path } = useLocation();
  const [open, setOpen] = useState(false);
  useEffect(() => setOpen(false), [path]);
  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <span class="brand">{props.product}</span>
        <button type="button" class="menu-toggle" aria-expanded={open} aria-controls="primary-nav" onClick={() => setOpen(!open)}>
          Menu
        </button>
        <nav id="primary-nav" aria-label="Main" class={open ? 'nav open' : 'nav'}>
          <ul>
            {props.nav.map((item) => {
              const current = item.href === '/' ? path === '/' : path === item.href || path.startsWith(`${item.href}/`);
              return (
                <li key={item.href}>
                  <Link href={item.href} aria-current={current ? 'page' : undefined}>
                    {item.label}
                  </Link>
                </li>
              );
            })}
          </ul>
          {props.account && <div class="account">{props.account}</div>}
        </nav>
      </header>
      <main id="main" tabIndex={-1}>
        {props.children}
      </main>
    </div>
  );
}

let baseTitle = '';
let titleDecorator: (title: string) => string = (title) => title;

/** Lets a page family add to every document title (the app's unread count: `(3) Inbox · …`). */
export function setTitleDecorator(decorate: (title: string) => string): void {
  titleDecorator = decorate;
  refreshTitle();
}

/** Applies the decorator again, after what it shows has changed. */
export function refreshTitle(): void {
  if (baseTitle) document.title = titleDecorator(baseTitle);
}

/** Page title: also sets the document title, and is the first heading for screen readers. */
export function PageTitle(props: { children: string; product: string; actions?: ComponentChildren }) {
  useEffect(() => {
    baseTitle = `${props.children} · ${props.product}`;
    refreshTitle();
  }, [props.children, props.product]);
  return (
    <div class="page-title">
      <h1>{props.children}</h1>
      {props.actions && <div class="actions">{props.actions}</div>}
    </div>
  );
}

export function Field(
  props: {
    label: string;
    hint?: string;
    error?: string | null;
    multiline?: boolean;
  } & Omit<InputHTMLAttributes, 'label'>,
) {
  const id = useId();
  const { label, hint, error, multiline, ...input } = props;
  const described = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {hint && (
        <p class="hint" id={`${id}-hint`}>
          {hint}
        </p>
      )}
      {multiline ? (
        <textarea
          id={id}
          aria-describedby={described}
          aria-invalid={error ? true : undefined}
          {...(input as unknown as TextareaHTMLAttributes)}
        />
      ) : (
        <input id={id} aria-describedby={described} aria-invalid={error ? true : undefined} {...(input as InputHTMLAttributes)} />
      )}
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

export function Notice(props: { kind?: 'error' | 'success' | 'info'; children: ComponentChildren }) {
  const kind = props.kind ?? 'info';
  return (
    <div class={`notice notice-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {props.children}
    </div>
  );
}

export function Loading(props: { label?: string }) {
  return (
    <p class="loading" role="status">
      {props.label ?? 'Loading…'}
    </p>
  );
}

/** Loading, error or content of a `useResource`. */
export function Loaded<T>(props: { resource: { data?: T; error?: string; loading: boolean }; children: (data: T) => ComponentChildren }) {
  const { data, error, loading } = props.resource;
  if (error) return <Notice kind="error">{error}</Notice>;
  if (data === undefined) return loading ? <Loading /> : null;
  return <>{props.children(data)}</>;
}

export function Button(props: { busy?: boolean; variant?: 'primary' | 'secondary' | 'danger' } & ButtonHTMLAttributes) {
  const { busy, variant, children, ...rest } = props;
  return (
    <button type="button" class={`button button-${variant ?? 'secondary'}`} aria-busy={busy ? true : undefined} disabled={busy} {...rest}>
      {children}
    </button>
  );
}

/**
 * A modal confirmation on the native <dialog> element: focus moves into it,
 * Escape cancels, and focus returns to the opener when it closes.
 */
export function ConfirmDialog(props: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  danger?: boolean;
  busy?: boolean;
  error?: string | null;
  onConfirm: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (props.open && !dialog.open) dialog.showModal();
    if (!props.open && dialog.open) dialog.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      class="dialog"
      aria-labelledby={titleId}
      onCancel={(event) => {
        event.preventDefault();
        props.onCancel();
      }}
    >
      <h2 id={titleId}>{props.title}</h2>
      <div class="dialog-body">{props.children}</div>
      {props.error && <Notice kind="error">{props.error}</Notice>}
      <div class="dialog-actions">
        <Button onClick={props.onCancel} disabled={props.busy}>
          Cancel
        </Button>
        <Button variant={props.danger ? 'danger' : 'primary'} busy={props.busy} onClick={props.onConfirm}>
          {props.confirmLabel}
        </Button>
      </div>
    </dialog>
  );
}

export function EmptyState(props: { children: ComponentChildren }) {
  return <p class="empty">{props.children}</p>;
}

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—';
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}
