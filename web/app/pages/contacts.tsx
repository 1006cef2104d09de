import { useEffect, useRef, useState } from 'preact/hooks';
import { formValues, ok, type Schemas } from '../../shared/api';
import { Link } from '../../shared/router';
import { Button, ConfirmDialog, EmptyState, Field, formatDate, Loaded, Notice, PageTitle, useAction, useResource } from '../../shared/ui';
import { gateway, usePresence } from '../gateway';
import { PRODUCT } from '../product';
import { api } from '../session';

/** `connected`: both added each other (presence, typing and receipts are shared); says nothing else about the address. */
export type Contact = Schemas['ContactDto'];

const PAGE = 20;

/** Presence of a contact's person: pass the contact id only when the contact is `connected`. */
export function PresenceBadge(props: { contactId: string | null; refreshIfUnknown?: boolean }) {
  const status = usePresence(props.contactId, props.refreshIfUnknown);
  // Presence is shared between mutual contacts only: without it, say nothing rather than "offline".
  if (!props.contactId || !status) return null;
  const label = status;
  const good = label === 'online';
  return (
    <span class={`badge ${good ? 'badge-good' : label === 'offline' || label === 'unknown' ? '' : 'badge-warn'} presence`}>
      {humanStatus(label)}
    </span>
  );
}

function humanStatus(status: string): string {
  return { online: 'Online', away: 'Away', dnd: 'Do not disturb', offline: 'Offline', unknown: 'Status unknown' }[status] ?? status;
}

/** The relationship score (0–100) as a meter with its number. */
export function Score(props: { value: number }) {
  const value = Number.isFinite(props.value) ? Math.min(Math.max(props.value, 0), 100) : 0;
  return (
    <span class="score">
      <meter min={0} max={100} value={value} aria-label="Relationship score" />
      <span>{value.toFixed(1)}</span>
    </span>
  );
}

function ContactRow(props: { contact: Contact; onChanged: () => void }) {
  const { contact } = props;
  const [editing, setEditing] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const save = useAction(async (values: Record<string, string>) => {
    // Only what changed: an untouched field is never sent back.
    const body: Schemas['UpdateContactDto'] = {};
    if (values.name !== contact.name) body.name = values.name;
    const email = values.email ? values.email : null;
    if (email !== contact.email) body.email = email;
    if (Object.keys(body).length === 0) {
      setEditing(false);
      return;
    }
    const updated = await ok(api.PATCH('/v1/contacts/{id}', { params: { path: { id: contact.id } }, body }));
    if (updated.connected && !contact.connected) gateway.refresh();
    setEditing(false);
    props.onChanged();
  });
  const remove = useAction(async () => {
    await ok(api.DELETE('/v1/contacts/{id}', { params: { path: { id: contact.id } } }));
    setConfirming(false);
    props.onChanged();
  });
  return (
    <li class="card contact">
      {editing ? (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void save.run(formValues(event.currentTarget));
          }}
          aria-label={`Edit ${contact.name}`}
        >
          <Field label="Name" name="name" required maxLength={200} defaultValue={contact.name} autoComplete="off" />
          <Field label="Email (optional)" name="email" type="email" defaultValue={contact.email ?? ''} autoComplete="off" />
          {save.error && <Notice kind="error">{save.error}</Notice>}
          <div class="row">
            <Button type="submit" variant="primary" busy={save.busy}>
              Save
            </Button>
            <Button onClick={() => setEditing(false)}>Cancel</Button>
          </div>
        </form>
      ) : (
        <>
          <div class="contact-head">
            <h3>
              <Link href={`/contacts/${contact.id}`}>{contact.name}</Link>
            </h3>
            <PresenceBadge contactId={contact.connected ? contact.id : null} />
          </div>
          {contact.email && <p class="muted">{contact.email}</p>}
          <p>
            Relationship score <Score value={contact.relationship_score} />
          </p>
          <p class="muted">Last interaction: {contact.last_interaction ? formatDate(contact.last_interaction) : 'none yet'}</p>
          <div class="row">
            <Link class="button button-primary" href={`/contacts/${contact.id}`}>
              Message {contact.name}
            </Link>
            <Button onClick={() => setEditing(true)} aria-label={`Edit ${contact.name}`}>
              Edit
            </Button>
            <Button variant="danger" onClick={() => setConfirming(true)} aria-label={`Delete ${contact.name}`}>
              Delete
            </Button>
          </div>
        </>
      )}
      <ConfirmDialog
        open={confirming}
        title={`Delete ${contact.name}?`}
        confirmLabel="Delete contact"
        danger
        busy={remove.busy}
        error={remove.error}
        onConfirm={() => void remove.run()}
        onCancel={() => setConfirming(false)}
      >
        <p>The contact leaves your groups. Messages you already sent stay in your history.</p>
      </ConfirmDialog>
    </li>
  );
}

export function ContactsPage() {
  const [offset, setOffset] = useState(0);
  const list = useResource(() => ok(api.GET('/v1/contacts', { params: { query: { limit: PAGE, offset } } })), [offset]);
  const [added, setAdded] = useState<string | null>(null);
  // A contact whose person has not added the user back (or not joined yet) links later, on their side: look again
  // now and then, and ask the gateway for a fresh presence list when one has become mutual.
  const waiting = (list.data?.contacts ?? []).some((c) => !c.connected && c.email);
  useEffect(() => {
    if (!waiting) return;
    const timer = setInterval(() => {
      if (document.visibilityState === 'visible') list.reload();
    }, 10_000);
    return () => clearInterval(timer);
  }, [waiting, list.reload]);
  const connectedIds = (list.data?.contacts ?? [])
    .filter((c) => c.connected)
    .map((c) => c.id)
    .join(',');
  const previousConnected = useRef<string | null>(null);
  useEffect(() => {
    if (!list.data) return;
    const before = previousConnected.current;
    previousConnected.current = connectedIds;
    if (before !== null && connectedIds.split(',').some((id) => id && !before.split(',').includes(id))) gateway.refresh();
  }, [connectedIds, list.data !== undefined]);
  const add = useAction(async (form: HTMLFormElement) => {
    const values = formValues(form);
    const contact = await ok(api.POST('/v1/contacts', { body: { name: values.name, ...(values.email ? { email: values.email } : {}) } }));
    form.reset();
    setAdded(`${contact.name} was added.`);
    // A new mutual contact's presence only a fresh `ready` lists.
    if (contact.connected) gateway.refresh();
    list.reload();
  });
  return (
    <>
      <PageTitle product={PRODUCT}>Contacts</PageTitle>
      <section class="card" aria-labelledby="add-contact">
        <h2 id="add-contact">Add a contact</h2>
        <form
          onSubmit={(event) => {
            event.preventDefault();
            setAdded(null);
            void add.run(event.currentTarget);
          }}
        >
          <Field label="Name" name="name" required maxLength={200} autoComplete="off" />
          <Field
            label="Email (optional)"
            name="email"
            type="email"
            autoComplete="off"
            hint="If they use this service with this address, you can message each other and see when they are online."
          />
          {add.error && <Notice kind="error">{add.error}</Notice>}
          {added && <Notice kind="success">{added}</Notice>}
          <Button type="submit" variant="primary" busy={add.busy}>
            Add contact
          </Button>
        </form>
      </section>
      <section aria-labelledby="contact-list">
        <h2 id="contact-list">Your contacts</h2>
        <Loaded resource={list}>
          {(data) =>
            data.contacts.length === 0 ? (
              <EmptyState>No contacts yet.</EmptyState>
            ) : (
              <>
                <p class="muted">
                  {data.total} contact{data.total === 1 ? '' : 's'}, closest first.
                </p>
                <ul class="contact-list">
                  {data.contacts.map((contact) => (
                    <ContactRow key={contact.id} contact={contact} onChanged={list.reload} />
                  ))}
                </ul>
                {(offset > 0 || data.total > PAGE) && (
                  <nav class="row" aria-label="Contact pages">
                    <Button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
                      Previous
                    </Button>
                    <Button disabled={offset + PAGE >= data.total} onClick={() => setOffset(offset + PAGE)}>
                      Next
                    </Button>
                  </nav>
                )}
              </>
            )
          }
        </Loaded>
      </section>
    </>
  );
}
