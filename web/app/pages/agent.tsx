import { useRef, useState } from 'preact/hooks';
import { formValues, newIdempotencyKey } from '../../shared/api';
import { Button, Field, Notice, PageTitle, useAction } from '../../shared/ui';
import { PRODUCT } from '../product';
import { api } from '../session';

interface AgentAction {
  id: string;
  status: string;
  result?: Record<string, unknown> | null;
  error?: string | null;
}

const FINISHED = ['completed', 'failed'];

/** The agent drafts an email in the user's voice (POST /v1/agents/execute, action draft_email); a slow run is polled. */
export function AgentPage() {
  const [draft, setDraft] = useState<string | null>(null);
  const [status, setStatus] = useState<string | null>(null);
  const key = useRef<string | null>(null);
  const run = useAction(async (values: Record<string, string>) => {
    setDraft(null);
    key.current ??= newIdempotencyKey();
    let action = await api<AgentAction>(
      'POST',
      '/v1/agents/execute',
      { action: 'draft_email', params: { to: values.to, subject: values.subject, context: values.context } },
      key.current,
    );
    for (let attempt = 0; !FINISHED.includes(action.status) && attempt < 60; attempt += 1) {
      setStatus(`The agent is working (${action.status})…`);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      action = await api<AgentAction>('GET', `/v1/agents/actions/${encodeURIComponent(action.id)}`);
    }
    setStatus(null);
    key.current = null;
    if (action.status === 'failed') throw new Error(action.error ?? 'The agent could not draft this email.');
    if (!FINISHED.includes(action.status)) throw new Error('The agent is taking too long. Try again later.');
    const text = action.result?.draft;
    setDraft(typeof text === 'string' ? text : '');
  });
  return (
    <>
      <PageTitle product={PRODUCT}>Agent</PageTitle>
      <form
        class="card"
        aria-labelledby="draft-heading"
        onSubmit={(event) => {
          event.preventDefault();
          void run.run(formValues(event.currentTarget));
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
          hint="A few words of context; the agent writes in your style."
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
          <Field label="Draft (edit and copy)" name="draft" multiline value={draft} />
        </section>
      )}
    </>
  );
}
