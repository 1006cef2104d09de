import { useId, useState } from 'preact/hooks';
import { describeError, newIdempotencyKey, ok, type Schemas } from '../shared/api';
import { Button, ConfirmDialog, formatDate, Notice } from '../shared/ui';
import { api } from './session';
import { isObject } from '../shared/json';
import { display, humanise, isNumber, type SurfaceComponent } from './widgets';

/**
 * An `action` capability is never run without the user's click, and never
 * without their confirmation: the button only asks the service for a pending
 * confirmation (the runtime is not called), the dialog says what will happen,
 * and only "Confirm" makes the service call the runtime, once.
 */
type Confirmation = Schemas['ActionConfirmationDto'];

interface FieldSpec {
  name: string;
  type: 'string' | 'number' | 'integer' | 'boolean';
  label: string;
  description: string | null;
  required: boolean;
  options: string[] | null;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  minLength?: number;
}

/** The simple fields of an object schema (strings, numbers, booleans, enums); anything else is left to the example input. */
function fieldsOf(schema: unknown): FieldSpec[] {
  if (!isObject(schema) || !isObject(schema.properties)) return [];
  const required = Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : [];
  // Stored schemas lose the provider's property order (jsonb sorts keys): required fields first, in `required` order.
  const rank = (name: string) => (required.includes(name) ? required.indexOf(name) : required.length);
  const entries = Object.entries(schema.properties).sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b));
  return entries.flatMap(([name, raw]): FieldSpec[] => {
    if (!isObject(raw)) return [];
    const type = raw.type;
    if (type !== 'string' && type !== 'number' && type !== 'integer' && type !== 'boolean') return [];
    const options = Array.isArray(raw.enum) ? raw.enum.filter((v) => typeof v === 'string' || isNumber(v)).map(String) : null;
    return [
      {
        name,
        type,
        label: humanise(name),
        description: typeof raw.description === 'string' ? raw.description : null,
        required: required.includes(name),
        options: options && options.length > 0 ? options : null,
        minimum: isNumber(raw.minimum) ? raw.minimum : undefined,
        maximum: isNumber(raw.maximum) ? raw.maximum : undefined,
        maxLength: isNumber(raw.maxLength) ? raw.maxLength : undefined,
        minLength: isNumber(raw.minLength) ? raw.minLength : undefined,
      },
    ];
  });
}

function initialValues(fields: FieldSpec[], example: unknown): Record<string, string> {
  const values: Record<string, string> = {};
  const source = isObject(example) ? example : {};
  for (const field of fields) {
    const value = source[field.name];
    values[field.name] = typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? String(value) : '';
  }
  return values;
}

function inputFrom(fields: FieldSpec[], values: Record<string, string>, example: unknown): Record<string, unknown> {
  const input: Record<string, unknown> = {};
  // Properties the form cannot edit (objects, arrays) keep the example's value.
  if (isObject(example)) for (const [key, value] of Object.entries(example)) if (!fields.some((f) => f.name === key)) input[key] = value;
  for (const field of fields) {
    const raw = (values[field.name] ?? '').trim();
    if (raw === '') continue;
    if (field.type === 'number' || field.type === 'integer') input[field.name] = Number(raw);
    else if (field.type === 'boolean') input[field.name] = raw === 'true';
    else input[field.name] = raw;
  }
  return input;
}

export function ActionForm(props: { model: SurfaceComponent; onDone?: () => void }) {
  const { model } = props;
  const fields = fieldsOf(model.input?.schema);
  const title = humanise(model.capability.name);
  const [values, setValues] = useState(() => initialValues(fields, model.input?.example));
  const [pending, setPending] = useState<Confirmation | null>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [dialogError, setDialogError] = useState<string | null>(null);
  const [outcome, setOutcome] = useState<{ kind: 'success' | 'info'; text: string; details?: unknown } | null>(null);

  const review = async () => {
    setBusy(true);
    setError(null);
    setOutcome(null);
    try {
      // For an action capability the answer is the pending confirmation (202), which the execution result only outlines.
      const confirmation = (await ok(
        api.POST('/v1/providers/packages/{package_id}/capabilities/{capability_name}/execute', {
          params: { path: { package_id: model.package.id, capability_name: model.capability.name } },
          body: { input: inputFrom(fields, values, model.input?.example), idempotencyKey: newIdempotencyKey() },
        }),
      )) as unknown as Confirmation;
      setDialogError(null);
      setPending(confirmation);
    } catch (failure) {
      setError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  const decide = async (decision: 'confirm' | 'cancel') => {
    if (!pending) return;
    setBusy(true);
    setDialogError(null);
    try {
      const answer = await ok(
        api.POST(decision === 'confirm' ? '/v1/actions/{confirmation_id}/confirm' : '/v1/actions/{confirmation_id}/cancel', {
          params: { path: { confirmation_id: pending.confirmationId } },
        }),
      );
      setPending(null);
      if (decision === 'cancel') setOutcome({ kind: 'info', text: `${title} cancelled. Nothing was sent to ${model.package.name}.` });
      else {
        setOutcome({ kind: 'success', text: answer.message || `${title} done.`, details: answer.result });
        props.onDone?.();
      }
    } catch (failure) {
      setDialogError(describeError(failure));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="action-form"
      onSubmit={(event) => {
        event.preventDefault();
        void review();
      }}
    >
      {model.capability.description && <p>{model.capability.description}</p>}
      {fields.map((field) => (
        <ActionField
          key={field.name}
          field={field}
          value={values[field.name] ?? ''}
          onInput={(value) => setValues({ ...values, [field.name]: value })}
        />
      ))}
      {error && <Notice kind="error">{error}</Notice>}
      {outcome && (
        <Notice kind={outcome.kind}>
          {outcome.text}
          {isObject(outcome.details) && (
            <dl class="result-list">
              {Object.entries(outcome.details).map(([key, value]) => (
                <div key={key}>
                  <dt>{humanise(key)}</dt>
                  <dd>{display(value)}</dd>
                </div>
              ))}
            </dl>
          )}
        </Notice>
      )}
      <Button type="submit" variant="primary" busy={busy && !pending}>
        {title}…
      </Button>
      <ConfirmDialog
        open={pending !== null}
        title={`Confirm: ${title}`}
        confirmLabel="Confirm"
        busy={busy}
        error={dialogError}
        onConfirm={() => void decide('confirm')}
        onCancel={() => void decide('cancel')}
      >
        <p>
          {model.package.name} will be asked to do this on your behalf. Nothing happens until you confirm.
          {model.capability.description ? ` ${model.capability.description}` : ''}
        </p>
        {pending && Object.keys(pending.input ?? {}).length > 0 && (
          <dl class="result-list">
            {Object.entries(pending.input).map(([key, value]) => (
              <div key={key}>
                <dt>{humanise(key)}</dt>
                <dd>{display(value)}</dd>
              </div>
            ))}
          </dl>
        )}
        {pending?.expiresAt && <p class="muted">This request lapses at {formatDate(pending.expiresAt)}.</p>}
      </ConfirmDialog>
    </form>
  );
}

function ActionField(props: { field: FieldSpec; value: string; onInput: (value: string) => void }) {
  const { field } = props;
  const fieldId = useId();
  const hintId = `${fieldId}-hint`;
  const common = {
    id: fieldId,
    name: field.name,
    required: field.required,
    'aria-describedby': field.description ? hintId : undefined,
  };
  let control;
  if (field.options) {
    control = (
      <select {...common} value={props.value} onChange={(e) => props.onInput(e.currentTarget.value)}>
        {!field.required && <option value="">—</option>}
        {field.options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
    );
  } else if (field.type === 'boolean') {
    control = (
      <select {...common} value={props.value} onChange={(e) => props.onInput(e.currentTarget.value)}>
        <option value="">—</option>
        <option value="true">Yes</option>
        <option value="false">No</option>
      </select>
    );
  } else if (field.type === 'number' || field.type === 'integer') {
    control = (
      <input
        {...common}
        type="number"
        inputMode="decimal"
        step={field.type === 'integer' ? 1 : 'any'}
        min={field.minimum}
        max={field.maximum}
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
    );
  } else {
    control = (
      <input
        {...common}
        type="text"
        minLength={field.minLength}
        maxLength={field.maxLength}
        value={props.value}
        onInput={(e) => props.onInput(e.currentTarget.value)}
      />
    );
  }
  return (
    <div class="field">
      <label for={fieldId}>
        {field.label}
        {field.required ? '' : ' (optional)'}
      </label>
      {field.description && (
        <p class="hint" id={hintId}>
          {field.description}
        </p>
      )}
      {control}
    </div>
  );
}
