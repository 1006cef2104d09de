import { useState } from 'preact/hooks';
import { formValues, ok, type Schemas } from '../../shared/api';
import { Link } from '../../shared/router';
import { Button, ConfirmDialog, EmptyState, Field, Loaded, Notice, PageTitle, useAction, useResource } from '../../shared/ui';
import { useGatewayEvents } from '../gateway';
import { useInbox } from '../inbox';
import { PRODUCT } from '../product';
import { api } from '../session';
import type { Contact } from './contacts';

type Group = Schemas['GroupDto'];

function GroupRow(props: { group: Group; contacts: Map<string, Contact>; onChanged: () => void }) {
  const { group } = props;
  const [confirming, setConfirming] = useState(false);
  const remove = useAction(async () => {
    await ok(api.DELETE('/v1/groups/{id}', { params: { path: { id: group.id } } }));
    setConfirming(false);
    props.onChanged();
  });
  const names = group.member_ids.map((id) => props.contacts.get(id)?.name ?? 'Unknown contact');
  return (
    <li class="card">
      <h3>
        <Link href={`/groups/${group.id}`}>{group.name}</Link>
      </h3>
      <p class="muted">{names.length === 0 ? 'No members' : names.join(', ')}</p>
      <div class="row">
        <Link class="button button-primary" href={`/groups/${group.id}`}>
          Open {group.name}
        </Link>
        <Button variant="danger" onClick={() => setConfirming(true)} aria-label={`Delete group ${group.name}`}>
          Delete
        </Button>
      </div>
      <ConfirmDialog
        open={confirming}
        title={`Delete the group ${group.name}?`}
        confirmLabel="Delete group"
        danger
        busy={remove.busy}
        error={remove.error}
        onConfirm={() => void remove.run()}
        onCancel={() => setConfirming(false)}
      >
        <p>The contacts stay in your contact list; only the group goes.</p>
      </ConfirmDialog>
    </li>
  );
}

/** Groups of contacts: list, create with members, delete. */
export function GroupsPage() {
  const groups = useResource(() => ok(api.GET('/v1/groups', { params: { query: { limit: 100 } } })), []);
  const contacts = useResource(() => ok(api.GET('/v1/contacts', { params: { query: { limit: 100 } } })), []);
  const create = useAction(async (form: HTMLFormElement) => {
    const values = formValues(form);
    const members = [...form.querySelectorAll<HTMLInputElement>('input[name="member"]:checked')].map((input) => input.value);
    await ok(api.POST('/v1/groups', { body: { name: values.name, member_ids: members } }));
    form.reset();
    groups.reload();
  });
  const byId = new Map((contacts.data?.contacts ?? []).map((c) => [c.id, c]));
  // Groups others created with the user in them come from the conversation list (the groups API lists the user's own).
  const inbox = useInbox();
  const owned = new Set((groups.data?.groups ?? []).map((g) => g.id));
  const memberOf = groups.data ? inbox.conversations.filter((c) => c.kind === 'group' && !owned.has(c.id)) : [];
  useGatewayEvents(['group.updated'], () => groups.reload(), []);
  return (
    <>
      <PageTitle product={PRODUCT}>Groups</PageTitle>
      <form
        class="card"
        aria-labelledby="new-group"
        onSubmit={(event) => {
          event.preventDefault();
          void create.run(event.currentTarget);
        }}
      >
        <h2 id="new-group">New group</h2>
        <Field label="Group name" name="name" required maxLength={200} autoComplete="off" />
        <fieldset>
          <legend>Members</legend>
          <Loaded resource={contacts}>
            {(data) =>
              data.contacts.length === 0 ? (
                <EmptyState>Add contacts first.</EmptyState>
              ) : (
                data.contacts.map((c) => (
                  <div class="check" key={c.id}>
                    <input type="checkbox" name="member" value={c.id} id={`member-${c.id}`} />
                    <label for={`member-${c.id}`}>{c.name}</label>
                  </div>
                ))
              )
            }
          </Loaded>
        </fieldset>
        {create.error && <Notice kind="error">{create.error}</Notice>}
        <Button type="submit" variant="primary" busy={create.busy}>
          Create group
        </Button>
      </form>
      <section aria-labelledby="group-list">
        <h2 id="group-list">Your groups</h2>
        <Loaded resource={groups}>
          {(data) =>
            data.groups.length === 0 ? (
              <EmptyState>No groups yet.</EmptyState>
            ) : (
              <ul class="plain-list">
                {data.groups.map((g) => (
                  <GroupRow key={g.id} group={g} contacts={byId} onChanged={groups.reload} />
                ))}
              </ul>
            )
          }
        </Loaded>
      </section>
      {memberOf.length > 0 && (
        <section aria-labelledby="member-groups">
          <h2 id="member-groups">Groups you are in</h2>
          <ul class="plain-list">
            {memberOf.map((g) => (
              <li key={g.id} class="card">
                <h3>
                  <Link href={`/groups/${g.id}`}>{g.name}</Link>
                </h3>
                <Link class="button button-primary" href={`/groups/${g.id}`}>
                  Open {g.name}
                </Link>
              </li>
            ))}
          </ul>
        </section>
      )}
    </>
  );
}
