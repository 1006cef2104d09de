import type { ComponentChildren } from 'preact';
import { useId, useRef, useState } from 'preact/hooks';
import { Link } from '../shared/router';
import { EmptyState, Loaded, PageTitle } from '../shared/ui';
import { PRODUCT } from './product';

/**
 * Secrets the API shows once (client secret, webhook signing secret) pass from
 * the page that received them to the page that shows them through memory only:
 * never storage, never the URL. Reading one removes it.
 */
const handedOver = new Map<string, string>();

export function handOverSecret(key: string, secret: string): void {
  handedOver.set(key, secret);
}

export function takeSecret(key: string): string | null {
  const secret = handedOver.get(key) ?? null;
  handedOver.delete(key);
  return secret;
}

/** A secret shown once, with a copy button and the warning that it will not be shown again. */
export function SecretReveal(props: { label: string; secret: string; onDismiss?: () => void }) {
  const [copied, setCopied] = useState<string | null>(null);
  const valueRef = useRef<HTMLElement>(null);
  const headingId = useId();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(props.secret);
      setCopied('Copied to the clipboard.');
    } catch {
      // No clipboard permission: select the text so Ctrl+C / long press copies it.
      const selection = window.getSelection();
      if (selection && valueRef.current) {
        selection.selectAllChildren(valueRef.current);
      }
      setCopied('Selected: copy it with your keyboard or the context menu.');
    }
  };
  return (
    <section class="notice notice-success secret-reveal" aria-labelledby={headingId}>
      <h2 id={headingId}>{props.label}</h2>
      <p>
        <strong>Copy it now: you won’t see it again.</strong> Store it in your secret manager; if it is lost, rotate it.
      </p>
      <div class="secret">
        <code ref={valueRef}>{props.secret}</code>
        <button type="button" class="button button-primary" onClick={() => void copy()}>
          Copy {props.label.toLowerCase()}
        </button>
        {props.onDismiss && (
          <button type="button" class="button button-secondary" onClick={props.onDismiss}>
            I have stored it
          </button>
        )}
      </div>
      <p role="status" class="hint">
        {copied ?? ''}
      </p>
    </section>
  );
}

const STATE_KIND: Record<string, string> = {
  published: 'good',
  approved: 'good',
  delivered: 'good',
  completed: 'good',
  active: 'good',
  passed: 'good',
  failed: 'bad',
  suspended: 'bad',
  in_review: 'warn',
  pending: 'warn',
  queued: 'warn',
  running: 'warn',
  warning: 'warn',
};

export function StateBadge(props: { state: string }) {
  const kind = STATE_KIND[props.state];
  return <span class={kind ? `badge badge-${kind}` : 'badge'}>{props.state.replace(/_/g, ' ')}</span>;
}

export function Breadcrumbs(props: { items: Array<{ href: string; label: string }> }) {
  return (
    <nav aria-label="Breadcrumb" class="breadcrumbs">
      <ol>
        {props.items.map((item) => (
          <li key={item.href}>
            <Link href={item.href}>{item.label}</Link>
          </li>
        ))}
      </ol>
    </nav>
  );
}

/** Label and value pairs of a record. */
export function Facts(props: { items: Array<[string, ComponentChildren]> }) {
  return (
    <dl class="facts">
      {props.items.map(([term, value]) => (
        <div key={term}>
          <dt>{term}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

export function Section(props: { title: string; children: ComponentChildren; actions?: ComponentChildren }) {
  const id = useId();
  return (
    <section class="card" aria-labelledby={id}>
      <div class="section-head">
        <h2 id={id}>{props.title}</h2>
        {props.actions && <div class="actions">{props.actions}</div>}
      </div>
      {props.children}
    </section>
  );
}

/**
 * The skeleton the list pages share: the title with the link that creates one more, then the list as a table
 * (its caption for screen readers) or, when there is none yet, a sentence saying what to do.
 */
export function ListPage<T extends { id: string }>(props: {
  title: string;
  create: { href: string; label: string };
  resource: { data?: T[]; error?: string; loading: boolean };
  empty: ComponentChildren;
  caption: string;
  columns: string[];
  /** The cells (`<td>`) of one item's row. */
  cells: (item: T) => ComponentChildren;
}) {
  return (
    <>
      <PageTitle
        product={PRODUCT}
        actions={
          <Link href={props.create.href} class="button button-primary">
            {props.create.label}
          </Link>
        }
      >
        {props.title}
      </PageTitle>
      <Loaded resource={props.resource}>
        {(list) =>
          list.length === 0 ? (
            <EmptyState>{props.empty}</EmptyState>
          ) : (
            <div class="table-wrap">
              <table>
                <caption class="visually-hidden">{props.caption}</caption>
                <thead>
                  <tr>
                    {props.columns.map((column) => (
                      <th key={column} scope="col">
                        {column}
                      </th>
                    ))}
                  </tr>
                </thead>
                <tbody>
                  {list.map((item) => (
                    <tr key={item.id}>{props.cells(item)}</tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loaded>
    </>
  );
}

/** Where the developer docs are served (modules/developer-docs): outside the console, so a plain link, not the router's. */
export const DOCS_HREF = '/developers';

/** The console's link to the developer docs, for the shared layout's nav (main.tsx passes it with the account controls). */
export function DocsLink() {
  return (
    <a class="docs-link" href={DOCS_HREF}>
      Docs
    </a>
  );
}
