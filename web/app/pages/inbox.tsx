import { useState } from 'preact/hooks';
import { Link } from '../../shared/router';
import { Button, EmptyState, formatDate, Loading, Notice, PageTitle } from '../../shared/ui';
import { Conversation, inbox, useInbox } from '../inbox';
import { PRODUCT } from '../product';

const hrefOf = (c: Conversation) => (c.kind === 'group' ? `/groups/${c.id}` : `/contacts/${c.id}`);

function preview(c: Conversation): string {
  const last = c.last_message;
  if (!last) return 'No messages yet';
  const text = last.content.length > 90 ? `${last.content.slice(0, 89)}…` : last.content;
  return last.direction === 'outbound' ? `You: ${text}` : text;
}

/** Turns browser notifications on, only ever from the user's click (browsers ignore or punish unasked prompts). */
function NotificationSwitch() {
  useInbox();
  const [message, setMessage] = useState<string | null>(null);
  if (typeof Notification === 'undefined') return null;
  if (inbox.notificationsEnabled()) {
    return (
      <p class="row">
        <span class="muted">Notifications are on for messages to conversations you do not have open.</span>
        <Button onClick={() => inbox.disableNotifications()}>Turn notifications off</Button>
      </p>
    );
  }
  return (
    <div class="row">
      <Button
        onClick={() =>
          void inbox.enableNotifications().then((permission) => {
            if (permission === 'denied') setMessage('Your browser blocks notifications for this site; allow them in its site settings.');
          })
        }
      >
        Turn on notifications
      </Button>
      {message && <span class="muted">{message}</span>}
    </div>
  );
}

function ConversationList(props: { conversations: Conversation[] }) {
  return (
    <ul class="conversation-list">
      {props.conversations.map((c) => (
        <li key={c.id} class={`conversation${c.unread > 0 ? ' conversation-unread' : ''}`}>
          <Link href={hrefOf(c)} class="conversation-link">
            <span class="conversation-name">
              {c.name}
              {c.kind === 'group' && <span class="badge">Group</span>}
            </span>
            <span class="conversation-preview">{preview(c)}</span>
            <span class="conversation-meta">
              {c.last_message && <time dateTime={c.last_message.created_at}>{formatDate(c.last_message.created_at)}</time>}
              {c.unread > 0 && (
                <span class="badge badge-unread">
                  {c.unread}
                  <span class="visually-hidden"> unread</span>
                </span>
              )}
            </span>
          </Link>
        </li>
      ))}
    </ul>
  );
}

/** The newest conversations, for the home page. */
export function RecentConversations() {
  const state = useInbox();
  if (!state.loaded || !state.available || state.conversations.length === 0) return null;
  return (
    <section aria-labelledby="recent-heading" class="placement">
      <h2 id="recent-heading">Recent conversations</h2>
      <ConversationList conversations={state.conversations.slice(0, 3)} />
      <p>
        <Link href="/inbox">All conversations</Link>
      </p>
    </section>
  );
}

/** Conversations with people and groups, newest first, with what is unread. */
export function InboxPage() {
  const state = useInbox();
  const total = inbox.totalUnread();
  return (
    <>
      <PageTitle product={PRODUCT}>Inbox</PageTitle>
      <NotificationSwitch />
      {state.error && <Notice kind="error">{state.error}</Notice>}
      {!state.available && (
        <Notice kind="info">
          The conversation list is not available from the service yet. Open a conversation from <Link href="/contacts">Contacts</Link> or{' '}
          <Link href="/groups">Groups</Link>.
        </Notice>
      )}
      {!state.loaded && <Loading />}
      {state.loaded && state.available && (
        <section aria-labelledby="conversations-heading">
          <h2 id="conversations-heading">Conversations{total > 0 ? <span class="muted"> ({total} unread)</span> : null}</h2>
          {state.conversations.length === 0 ? (
            <EmptyState>
              No conversations yet. Write to someone from <Link href="/contacts">Contacts</Link> or to a group from{' '}
              <Link href="/groups">Groups</Link>.
            </EmptyState>
          ) : (
            <ConversationList conversations={state.conversations} />
          )}
        </section>
      )}
    </>
  );
}
