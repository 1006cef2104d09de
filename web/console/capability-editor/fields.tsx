/**
 * The form editor's inputs: each reads one member of the descriptor and writes it back through the editor's
 * `update`, and shows the service's errors about that member (and inside it) beside it.
 */
import { useEffect, useId, useState } from 'preact/hooks';
import { Field } from '../../shared/ui';
import { isObject } from '../../shared/json';
import { formatDocument } from './model';

/** Every message as one error text (a field may be named by several errors). */
export function errorText(messages: Array<string | null | undefined>): string | undefined {
  const list = messages.filter((m): m is string => Boolean(m));
  return list.length > 0 ? list.join(' ') : undefined;
}

/** A text member; empty text removes it unless `keepEmpty` (a required member: the service then names it). */
export function TextField(props: {
  label: string;
  value: unknown;
  onValue: (value: string | undefined) => void;
  errors: string[];
  hint?: string;
  multiline?: boolean;
  keepEmpty?: boolean;
  inputMode?: 'url' | 'text';
}) {
  const value = typeof props.value === 'string' ? props.value : props.value === undefined ? '' : JSON.stringify(props.value);
  return (
    <Field
      label={props.label}
      hint={props.hint}
      multiline={props.multiline}
      value={value}
      spellcheck={props.inputMode === 'url' ? false : undefined}
      inputMode={props.inputMode}
      error={errorText(props.errors)}
      onInput={(event) => {
        const text = event.currentTarget.value;
        props.onValue(text === '' && !props.keepEmpty ? undefined : text);
      }}
    />
  );
}

/**
 * A whole number of seconds. Not an `<input type=number>` with `min`: the browser would keep an out-of-range value
 * from being sent, and the service lists every error at once by its field. Text that is not a number is written as
 * it is, so the JSON shows what the service will refuse.
 */
export function NumberField(props: { label: string; value: unknown; onValue: (value: unknown) => void; errors: string[]; hint?: string }) {
  const value = props.value === undefined ? '' : typeof props.value === 'string' ? props.value : JSON.stringify(props.value);
  return (
    <Field
      label={props.label}
      hint={props.hint}
      inputMode="numeric"
      value={value}
      error={errorText(props.errors)}
      onInput={(event) => {
        const text = event.currentTarget.value.trim();
        props.onValue(text === '' ? undefined : /^-?\d+$/.test(text) ? Number(text) : text);
      }}
    />
  );
}

/**
 * A member written as JSON (a schema, an example). Its own text is kept while it does not parse (the descriptor
 * keeps the last value that did); when the descriptor changes elsewhere (the JSON view), the text follows.
 */
export function JsonField(props: {
  label: string;
  value: unknown;
  onValue: (value: unknown) => void;
  errors: string[];
  hint?: string;
  rows?: number;
}) {
  const shown = props.value === undefined ? '' : formatDocument(props.value);
  const [text, setText] = useState(shown);
  const [parseError, setParseError] = useState<string | null>(null);
  useEffect(() => {
    if (sameJson(text, props.value)) return;
    setText(shown);
    setParseError(null);
    // Only a change of the value from elsewhere rewrites the text the developer is typing.
  }, [shown]);
  return (
    <Field
      label={props.label}
      hint={props.hint}
      multiline
      class={props.rows && props.rows <= 3 ? 'json-input json-input-short' : 'json-input'}
      spellcheck={false}
      value={text}
      error={errorText([parseError, ...props.errors])}
      onInput={(event) => {
        const next = (event.currentTarget as unknown as HTMLTextAreaElement).value;
        setText(next);
        if (next.trim() === '') {
          setParseError(null);
          props.onValue(undefined);
          return;
        }
        try {
          const parsed = JSON.parse(next) as unknown;
          setParseError(null);
          props.onValue(parsed);
        } catch (error) {
          setParseError(
            `Not JSON yet (${error instanceof Error ? error.message : String(error)}): the descriptor keeps the last value that was.`,
          );
        }
      }}
    />
  );
}

function sameJson(text: string, value: unknown): boolean {
  if (text.trim() === '') return value === undefined;
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}

/** A choice from a list; the empty option (when given) removes the member, so the service's default applies. */
export function SelectField(props: {
  label: string;
  value: unknown;
  options: readonly string[];
  onValue: (value: string | undefined) => void;
  errors: string[];
  empty?: string;
  hint?: string;
}) {
  const id = useId();
  const error = errorText(props.errors);
  const value = typeof props.value === 'string' ? props.value : '';
  const unknown = value !== '' && !props.options.includes(value);
  const described = [props.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.hint && (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
      <select
        id={id}
        value={value}
        aria-describedby={described}
        aria-invalid={error ? true : undefined}
        onChange={(event) => props.onValue(event.currentTarget.value || undefined)}
      >
        {props.empty !== undefined && <option value="">{props.empty}</option>}
        {unknown && <option value={value}>{value} (not a known value)</option>}
        {props.options.map((option) => (
          <option key={option} value={option}>
            {option}
          </option>
        ))}
      </select>
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </div>
  );
}

/** Checkboxes over a list of values, in a labelled group. */
export function CheckboxGroup(props: {
  legend: string;
  options: readonly string[];
  checked: string[];
  onToggle: (option: string, on: boolean) => void;
  errors: string[];
  hint?: string;
}) {
  const id = useId();
  const error = errorText(props.errors);
  return (
    <fieldset
      class="field checkboxes"
      aria-describedby={[props.hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ') || undefined}
    >
      <legend>{props.legend}</legend>
      {props.hint && (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
      <div class="checkbox-options">
        {props.options.map((option) => (
          <label key={option}>
            <input
              type="checkbox"
              checked={props.checked.includes(option)}
              onChange={(event) => props.onToggle(option, event.currentTarget.checked)}
            />{' '}
            <code>{option}</code>
          </label>
        ))}
      </div>
      {error && (
        <p class="field-error" id={`${id}-error`}>
          {error}
        </p>
      )}
    </fieldset>
  );
}

export function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

export { isObject };
