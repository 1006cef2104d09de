import { useRef, useState } from 'preact/hooks';
import { formValues, idempotent, newIdempotencyKey, ok, type Schemas } from '../../shared/api';
import { Button, Field, Notice, PageTitle, useAction } from '../../shared/ui';
import { PRODUCT } from '../product';
import { api } from '../session';

interface DraftRequest {
  to: string;
  subject: string;
  context: string;
}

interface Draft extends DraftRequest {
  text: string;
  source: string | null;
}

const FINISHED = ['completed', 'failed'];

/**
 * A `mailto:` link (RFC 6068) that opens the draft in the user's mail client:
 * every field percent-encoded (so `&`, `?`, `#` and non-ASCII survive), line
 * breaks as CRLF, and the address's `@` kept readable.
 */
export function mailtoLink(to: string, subject: string, body: string): string {
  const encode = (text: string) => encodeURIComponent(text.replace(/\r?\n/g, '\r\n'));
  return `mailto:${encodeURIComponent(to).replace(/%40/g, '@')}?subject=${encode(subject)}&body=${encode(body)}`;
}

async function copyText(text: string, fallbackField: HTMLTextAreaElement | null): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    // Clipboard API refused (permissions, insecure origin): select the text and use the older command.
    if (!fallbackField) throw new Error('Copying is not available in this browser: select the draft and copy it.');
    fallbackField.select();
    if (!document.execCommand('copy')) throw new Error('Copying is not available in this browser: select the draft and copy it.');
  }
}

/** The agent drafts an email in the user's voice (POST /v1/agents/execute, action draft_email); a slow run is polled. */
export function AgentPage() {
  const [draft, setDraft] = useState<Draft | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const [copied, setCopied] = useState<string | null>(null);
  const key = useRef<string | null>(null);
  const draftField = useRef<HTMLDivElement>(null);
  const run = useAction(async (values: DraftRequest) => {
    setCopied(null);
    key.current ??= newIdempotencyKey();
    let action: Schemas['AgentActionResultDto'] | Schemas['AgentActionDto'] = await ok(
      api.POST('/v1/agents/execute', {
        body: { action: 'draft_email', params: { to: values.to, subject: values.subject, context: values.context } },
        headers: idempotent(key.current),
      }),
    );
    for (let attempt = 0; !FINISHED.includes(action.status) && attempt < 60; attempt += 1) {
      setStatus(`The agent is working (${action.status})…`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      action = await ok(api.GET('/v1/agents/actions/{id}', { params: { path: { id: action.id } } }));
    }
    setStatus(null);
    key.current = null;
    if (action.status === 'failed') throw new Error(action.error ?? 'The agent could not draft this email.');
    if (!FINISHED.includes(action.status)) throw new Error('The agent is taking too long. Try again later.');
    const text = action.result?.draft;
    const source = action.result?.source;
    setDraft({ ...values, text: typeof text === 'string' ? text : '', source: typeof source === 'string' ? source : null });
  });
  const copy = useAction(async () => {
    if (!draft) return;
    await copyText(draft.text, draftField.current?.querySelector('textarea') ?? null);
    setCopied('Draft copied to the clipboard.');
  });
  const request = (values: Record<string, string>): DraftRequest => ({
    to: values.to ?? '',
    subject: values.subject ?? '',
    context: values.context ?? '',
  });
  return (
    <>
      <PageTitle product={PRODUCT}>Agent</PageTitle>
      <form
        class="card"
        aria-labelledby="draft-heading"
        onSubmit={(event) => {
          event.preventDefault();
          setDraft(null);
          void run.run(request(formValues(event.currentTarget)));
        }}
        onInput={() => (key.current = null)}
      >
        <h2 id="draft-heading">Draft an email</h2>
        <Field label="To" name="to" type="email" required autoComplete="email" />
        <Field label="Subject" name="subject" required maxLength={200} />
        <Field
          label="What should it say?"
          name="context"
          multiline
          required
          hint="Say what you want, e.g. “invite Bob to dinner on Friday”; the agent writes the email in your style (your soul record)."
        />
        {run.error && <Notice kind="error">{run.error}</Notice>}
        {status && <p role="status">{status}</p>}
        <Button type="submit" variant="primary" busy={run.busy}>
          Draft email
        </Button>
      </form>
      {draft !== null && (
        <section class="card" aria-labelledby="draft-result">
          <h2 id="draft-result">Draft</h2>
          <div ref={draftField}>
            <Field
              label="Draft (edit and copy)"
              name="draft"
              multiline
              value={draft.text}
              onInput={(event) => setDraft({ ...draft, text: (event.currentTarget as unknown as HTMLTextAreaElement).value })}
              hint={
                draft.source === 'llm'
                  ? 'Written by the language model in your style.'
                  : 'Written by the built-in composer from your soul record; change your soul and regenerate to hear the difference.'
              }
            />
          </div>
          <div class="actions">
            <Button variant="primary" onClick={() => void copy.run()} busy={copy.busy}>
              Copy
            </Button>
            <a class="button button-secondary" href={mailtoLink(draft.to, draft.subject, draft.text)}>
              Open in mail client
            </a>
            <Button
              busy={run.busy}
              onClick={() => {
                key.current = null;
                void run.run({ to: draft.to, subject: draft.subject, context: draft.context });
              }}
            >
              Regenerate
            </Button>
          </div>
          {copied && <p role="status">{copied}</p>}
          {copy.error && <Notice kind="error">{copy.error}</Notice>}
        </section>
      )}
    </>
  );
}
