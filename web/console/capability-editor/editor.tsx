/**
 * The capability editor (issue 24): package fields and capabilities as a form, the JSON view beside it, and a live
 * preview of each capability's widget. The JSON view is the single source of truth: the form shows the last JSON
 * that parsed and writes into it; while the JSON does not parse, the form says so and waits.
 */
import { useId, useState } from 'preact/hooks';
import { Button, Field } from '../../shared/ui';
import { isObject } from '../../shared/json';
import { DescriptorErrors } from '../guide';
import { RISK_TIERS } from '../types';
import { CheckboxGroup, JsonField, NumberField, SelectField, stringList, TextField } from './fields';
import {
  addCapability,
  CAPABILITY_MODES,
  capabilitiesOf,
  changeMode,
  COMPONENTS,
  EXAMPLE_MEMBERS,
  exampleFieldNames,
  FIELD_FORMATS,
  formatDocument,
  getIn,
  INTENTS,
  messagesAt,
  modeOf,
  parseDocument,
  PLACEMENTS,
  placementsOf,
  preferredComponentsOf,
  removeCapability,
  setIn,
  toggled,
  unclaimedIssues,
  type CapabilityMode,
  type FieldIssue,
  type JsonObject,
  type Path,
} from './model';
import { WidgetPreview } from './preview';
import './editor.css';

/** The editor's state: the JSON view's text, the last descriptor that parsed, and why the text does not (if so). */
export interface DescriptorDocument {
  text: string;
  value: JsonObject;
  error: string | null;
  /** The JSON view's text as typed: the form follows when it parses. */
  setText: (text: string) => void;
  /** A change from the form: the JSON view is rewritten from the new descriptor. */
  update: (change: (value: JsonObject) => JsonObject) => void;
}

export function useDescriptorDocument(initial: JsonObject): DescriptorDocument {
  const [state, setState] = useState(() => ({ text: formatDocument(initial), value: initial, error: null as string | null }));
  return {
    ...state,
    setText: (text) =>
      setState((previous) => {
        const parsed = parseDocument(text);
        return parsed.error === undefined
          ? { text, value: parsed.value, error: null }
          : { text, value: previous.value, error: parsed.error };
      }),
    update: (change) =>
      setState((previous) => {
        const value = change(previous.value);
        return { text: formatDocument(value), value, error: null };
      }),
  };
}

type Update = (path: Path, value: unknown) => void;

const MODE_HINTS: Record<CapabilityMode, string> = {
  state: 'state: data the service polls every refresh interval and shows as a widget.',
  action: 'action: something the runtime does for the user, always confirmed by the user first.',
  history: 'history: a paged list of past items.',
  realtime: 'realtime: a stream of events while a surface shows it.',
  webhook: 'webhook: events the provider pushes; the service never calls the runtime for it.',
};

const SCHEMA_LABELS: Record<CapabilityMode, string> = {
  state: 'Params schema (JSON)',
  action: 'Input schema (JSON)',
  history: 'Params schema (JSON)',
  realtime: 'Params schema (JSON)',
  webhook: 'Event data schema (JSON)',
};

const RESPONSE_LABELS: Record<string, string> = {
  params: 'Example params (JSON)',
  input: 'Example input (JSON)',
  response: 'Example response (JSON)',
  data: 'Example event data (JSON)',
};

/**
 * The form, the JSON view and, under the JSON view, every error of the service's refusal. `kind` says which body the
 * JSON is: a package (`POST /v1/providers/packages`) or a version (`POST …/versions`).
 */
export function DescriptorEditor(props: {
  kind: 'package' | 'version';
  document: DescriptorDocument;
  issues: FieldIssue[];
  failure: unknown;
  jsonLabel: string;
  jsonName: string;
  jsonHint: string;
  jsonError?: string | null;
  packageName?: string;
  runtimeHint?: string;
  versionHint?: string;
}) {
  const { document, issues } = props;
  const value = document.value;
  const update: Update = (path, next) => document.update((current) => setIn(current, path, next) as JsonObject);
  const packageName = props.packageName ?? (typeof value.name === 'string' ? value.name : '');
  return (
    <div class="capability-editor">
      <div class="editor-form">
        {document.error && (
          <p class="notice notice-info" role="status">
            The JSON view does not parse ({document.error}). The form shows the last JSON that parsed and waits until the JSON view parses
            again.
          </p>
        )}
        <fieldset class="editor-fields" disabled={document.error !== null}>
          <legend class="visually-hidden">Form editor</legend>
          <section aria-labelledby="editor-package-heading">
            <h2 id="editor-package-heading">{props.kind === 'package' ? 'Package' : 'Version number and runtime'}</h2>
            {props.kind === 'package' ? (
              <PackageFields value={value} update={update} issues={issues} />
            ) : (
              <VersionFields
                value={value}
                update={update}
                issues={issues}
                runtimeHint={props.runtimeHint}
                versionHint={props.versionHint}
              />
            )}
          </section>
          <CapabilityList document={document} issues={issues} packageName={packageName} />
        </fieldset>
      </div>
      <div class="editor-json">
        <Field
          label={props.jsonLabel}
          name={props.jsonName}
          multiline
          class="tall json-view"
          spellcheck={false}
          value={document.text}
          onInput={(event) => document.setText(event.currentTarget.value)}
          hint={props.jsonHint}
          error={props.jsonError}
          required
        />
        <DescriptorErrors error={props.failure} />
      </div>
    </div>
  );
}

function PackageFields(props: { value: JsonObject; update: Update; issues: FieldIssue[] }) {
  const { value, update, issues } = props;
  return (
    <>
      <TextField
        label="Package name"
        value={value.name}
        keepEmpty
        onValue={(v) => update(['name'], v)}
        errors={messagesAt(issues, ['name'])}
      />
      <TextField
        label="Slug"
        value={value.slug}
        keepEmpty
        hint="Lowercase words joined by hyphens, unique across the platform."
        onValue={(v) => update(['slug'], v)}
        errors={messagesAt(issues, ['slug'])}
      />
      <TextField
        label="Package description"
        value={value.description}
        keepEmpty
        multiline
        onValue={(v) => update(['description'], v)}
        errors={messagesAt(issues, ['description'])}
      />
      <SelectField
        label="Risk tier"
        value={value.riskTier}
        options={RISK_TIERS}
        empty="(choose a risk tier)"
        hint="A data_only package cannot carry action capabilities; high_trust and strategic_surface are reviewed by hand."
        onValue={(v) => update(['riskTier'], v)}
        errors={messagesAt(issues, ['riskTier'])}
      />
      <TextField
        label="Runtime URL"
        value={value.runtimeUrl}
        inputMode="url"
        hint="HTTPS base URL of your runtime, public addresses only."
        onValue={(v) => update(['runtimeUrl'], v)}
        errors={messagesAt(issues, ['runtimeUrl'])}
      />
      <TextField
        label="Version"
        value={value.version}
        hint="Three dot-separated numbers, such as 1.0.0 (the default)."
        onValue={(v) => update(['version'], v)}
        errors={messagesAt(issues, ['version'])}
      />
    </>
  );
}

function VersionFields(props: { value: JsonObject; update: Update; issues: FieldIssue[]; runtimeHint?: string; versionHint?: string }) {
  const { value, update, issues } = props;
  return (
    <>
      <TextField
        label="Version"
        value={value.version}
        keepEmpty
        hint={props.versionHint}
        onValue={(v) => update(['version'], v)}
        errors={messagesAt(issues, ['version'])}
      />
      <TextField
        label="Runtime URL"
        value={value.runtimeUrl}
        inputMode="url"
        hint={props.runtimeHint}
        onValue={(v) => update(['runtimeUrl'], v)}
        errors={messagesAt(issues, ['runtimeUrl'])}
      />
    </>
  );
}

function CapabilityList(props: { document: DescriptorDocument; issues: FieldIssue[]; packageName: string }) {
  const { document, issues } = props;
  const capabilities = capabilitiesOf(document.value);
  const [mode, setMode] = useState<CapabilityMode>('state');
  const modeId = useId();
  return (
    <section aria-labelledby="editor-capabilities-heading">
      <h2 id="editor-capabilities-heading">Capabilities</h2>
      {issues
        .filter((issue) => issue.field === 'capabilities')
        .map((issue) => (
          <p key={issue.message} class="field-error">
            {issue.message}
          </p>
        ))}
      {capabilities.length === 0 && <p class="hint">No capability yet: add one below.</p>}
      <ol class="capability-cards plain">
        {capabilities.map((capability, index) => (
          <li key={index}>
            <CapabilityCard
              index={index}
              capability={capability}
              issues={issues}
              packageName={props.packageName}
              update={(path, next) => document.update((current) => setIn(current, ['capabilities', index, ...path], next) as JsonObject)}
              replace={(next) => document.update((current) => setIn(current, ['capabilities', index], next) as JsonObject)}
              remove={() => document.update((current) => removeCapability(current, index))}
            />
          </li>
        ))}
      </ol>
      <div class="inline-form add-capability">
        <div class="field">
          <label for={modeId}>Mode of the new capability</label>
          <select id={modeId} value={mode} onChange={(event) => setMode(event.currentTarget.value as CapabilityMode)}>
            {CAPABILITY_MODES.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </div>
        <Button onClick={() => document.update((current) => addCapability(current, mode))}>Add capability</Button>
      </div>
    </section>
  );
}

/** The paths of the members the card shows as fields: errors inside any other member are listed at the card's top. */
function shownPaths(index: number, mode: CapabilityMode): Path[] {
  const at = (...path: Path): Path => ['capabilities', index, ...path];
  const members = EXAMPLE_MEMBERS[mode];
  return [
    at('type'),
    at('name'),
    at('description'),
    at('schema'),
    at('responseSchema'),
    ...(mode === 'state' ? [at('refreshInterval')] : []),
    ...(mode === 'realtime' ? [at('heartbeatInterval')] : []),
    ...(members.request ? [at('examples', 0, members.request)] : []),
    at('examples', 0, members.response),
    at('surfaceGuidance', 'title'),
    at('surfaceGuidance', 'intent'),
    at('surfaceGuidance', 'placement'),
    at('surfaceGuidance', 'preferredComponents'),
    at('surfaceGuidance', 'fields'),
  ];
}

function CapabilityCard(props: {
  index: number;
  capability: unknown;
  issues: FieldIssue[];
  packageName: string;
  update: Update;
  replace: (capability: unknown) => void;
  remove: () => void;
}) {
  const { index, capability, issues, update } = props;
  const headingId = useId();
  const previewId = useId();
  const mode = modeOf(capability);
  const source = isObject(capability) ? capability : {};
  const name = typeof source.name === 'string' && source.name ? source.name : `capability ${index + 1}`;
  const at = (...path: Path): Path => ['capabilities', index, ...path];
  const errors = (...path: Path) => messagesAt(issues, at(...path));
  const members = EXAMPLE_MEMBERS[mode];
  const others = unclaimedIssues(issues, at(), shownPaths(index, mode));
  const extraExamples = Array.isArray(source.examples) ? source.examples.length - 1 : 0;
  return (
    <section class="card capability-card" aria-labelledby={headingId}>
      <div class="section-head">
        <h3 id={headingId}>{`Capability ${index + 1}: ${name}`}</h3>
        <Button variant="danger" onClick={props.remove}>{`Remove capability ${name}`}</Button>
      </div>
      {others.length > 0 && (
        <ul class="field-error capability-issues" aria-label={`Other errors in capability ${index + 1}`}>
          {others.map((issue, i) => (
            <li key={i}>
              <code>{issue.field}</code> {issue.message}
            </li>
          ))}
        </ul>
      )}
      <div class="capability-grid">
        <div>
          <SelectField
            label="Mode"
            value={mode}
            options={CAPABILITY_MODES}
            hint={MODE_HINTS[mode]}
            onValue={(v) => props.replace(changeMode(capability, (v ?? 'state') as CapabilityMode))}
            errors={errors('type')}
          />
          <TextField
            label="Name"
            value={source.name}
            onValue={(v) => update(['name'], v)}
            errors={errors('name')}
            hint="Used in runtime paths; unique in the version."
          />
          <TextField
            label="Description"
            value={source.description}
            multiline
            hint="Shown to users; conformance wants at least 20 characters."
            onValue={(v) => update(['description'], v)}
            errors={errors('description')}
          />
          {mode === 'state' && (
            <NumberField
              label="Refresh interval (seconds)"
              value={source.refreshInterval}
              hint="Seconds between polls, 1 to 86400 (default 300)."
              onValue={(v) => update(['refreshInterval'], v)}
              errors={errors('refreshInterval')}
            />
          )}
          {mode === 'realtime' && (
            <NumberField
              label="Heartbeat interval (seconds)"
              value={source.heartbeatInterval}
              hint="Seconds between heartbeats, 1 to 3600 (default 30)."
              onValue={(v) => update(['heartbeatInterval'], v)}
              errors={errors('heartbeatInterval')}
            />
          )}
          <JsonField
            label={SCHEMA_LABELS[mode]}
            value={source.schema}
            hint="JSON Schema with type object (draft-07 or 2020-12), or the short form. A widget is polled with the defaults."
            onValue={(v) => update(['schema'], v)}
            errors={errors('schema')}
          />
          <JsonField
            label="Response schema (JSON)"
            value={source.responseSchema}
            hint="Schema of the runtime's data; conformance asks for one. Leave empty for none."
            onValue={(v) => update(['responseSchema'], v)}
            errors={errors('responseSchema')}
          />
          {members.request === 'event' && (
            <TextField
              label="Example event type"
              value={getIn(source, ['examples', 0, 'event'])}
              onValue={(v) => update(['examples', 0, 'event'], v)}
              errors={errors('examples', 0, 'event')}
            />
          )}
          {members.request && members.request !== 'event' && (
            <JsonField
              label={RESPONSE_LABELS[members.request]}
              value={getIn(source, ['examples', 0, members.request])}
              rows={3}
              onValue={(v) => update(['examples', 0, members.request as string], v)}
              errors={errors('examples', 0, members.request)}
            />
          )}
          <JsonField
            label={RESPONSE_LABELS[members.response]}
            value={getIn(source, ['examples', 0, members.response])}
            hint={`The first example's ${members.response}: the preview draws the widget from it.${extraExamples > 0 ? ` ${extraExamples} more example(s): edit them in the JSON view.` : ''}`}
            onValue={(v) => update(['examples', 0, members.response], v)}
            errors={errors('examples', 0, members.response)}
          />
          {mode === 'webhook' && <p class="hint">Event types (events) and a capability's own runtime URL are edited in the JSON view.</p>}
        </div>
        <div>
          <WidgetPreview capability={capability} packageName={props.packageName} headingId={previewId} />
          <SurfaceGuidanceFields capability={capability} update={update} errors={errors} issues={issues} base={at()} />
        </div>
      </div>
    </section>
  );
}

function SurfaceGuidanceFields(props: {
  capability: unknown;
  update: Update;
  errors: (...path: Path) => string[];
  issues: FieldIssue[];
  base: Path;
}) {
  const { capability, update, errors } = props;
  const guidance = getIn(capability, ['surfaceGuidance']);
  const mode = modeOf(capability);
  const preferred = preferredComponentsOf(capability);
  const listed = Array.isArray(getIn(guidance, ['preferredComponents']));
  return (
    <fieldset class="surface-guidance">
      <legend>How /app shows it (surface guidance)</legend>
      <TextField
        label="Widget title"
        value={getIn(guidance, ['title'])}
        hint="1 to 80 characters; default: the capability name made readable."
        onValue={(v) => update(['surfaceGuidance', 'title'], v)}
        errors={errors('surfaceGuidance', 'title')}
      />
      <SelectField
        label="Intent"
        value={getIn(guidance, ['intent'])}
        options={INTENTS}
        empty="(the mode's default)"
        onValue={(v) => update(['surfaceGuidance', 'intent'], v)}
        errors={errors('surfaceGuidance', 'intent')}
      />
      <CheckboxGroup
        legend="Placement"
        options={PLACEMENTS}
        checked={placementsOf(capability)}
        hint={Array.isArray(getIn(guidance, ['placement'])) ? undefined : `Not listed: the default for ${mode} is checked.`}
        onToggle={(option, on) => update(['surfaceGuidance', 'placement'], toggled(placementsOf(capability), option, on))}
        errors={errors('surfaceGuidance', 'placement')}
      />
      <CheckboxGroup
        legend="Preferred components"
        options={COMPONENTS}
        checked={preferred}
        hint={`In order of preference: ${preferred.join(', ')}${listed ? '' : ` (the default for ${mode})`}. A component you check goes last; reorder in the JSON view.`}
        onToggle={(option, on) =>
          update(
            ['surfaceGuidance', 'preferredComponents'],
            toggled(listed ? stringList(getIn(guidance, ['preferredComponents'])) : preferred, option, on),
          )
        }
        errors={errors('surfaceGuidance', 'preferredComponents')}
      />
      <SurfaceFields
        capability={capability}
        update={update}
        errors={errors}
        issues={props.issues}
        base={[...props.base, 'surfaceGuidance', 'fields']}
      />
    </fieldset>
  );
}

/** `surfaceGuidance.fields`: label, unit, format and hidden per top-level field of the data (docs/components.md). */
function SurfaceFields(props: {
  capability: unknown;
  update: Update;
  errors: (...path: Path) => string[];
  issues: FieldIssue[];
  base: Path;
}) {
  const { capability, update, errors } = props;
  const fields = getIn(capability, ['surfaceGuidance', 'fields']);
  const entries = isObject(fields) ? Object.entries(fields) : [];
  const [newName, setNewName] = useState('');
  const nameId = useId();
  const suggestions = exampleFieldNames(capability);
  const add = (names: string[]) => {
    let next: JsonObject = isObject(fields) ? { ...fields } : {};
    for (const name of names) if (!(name in next)) next = { ...next, [name]: {} };
    update(['surfaceGuidance', 'fields'], next);
  };
  return (
    <fieldset class="surface-fields">
      <legend>Fields of the data</legend>
      <p class="hint">How the widget labels and formats each top-level field of the data. Named fields only are shown in a stat row.</p>
      {unclaimedIssues(
        props.issues,
        props.base,
        entries
          .map(([field]) => [...props.base, field, 'label'])
          .concat(
            entries.map(([field]) => [...props.base, field, 'unit']),
            entries.map(([field]) => [...props.base, field, 'format']),
          ),
      ).map((issue, i) => (
        <p key={i} class="field-error">
          <code>{issue.field}</code> {issue.message}
        </p>
      ))}
      {entries.map(([field, spec]) => (
        <fieldset key={field} class="surface-field">
          <legend>
            Field <code>{field}</code>
          </legend>
          <TextField
            label={`Label of ${field}`}
            value={getIn(spec, ['label'])}
            onValue={(v) => update(['surfaceGuidance', 'fields', field, 'label'], v)}
            errors={errors('surfaceGuidance', 'fields', field, 'label')}
          />
          <TextField
            label={`Unit of ${field}`}
            value={getIn(spec, ['unit'])}
            onValue={(v) => update(['surfaceGuidance', 'fields', field, 'unit'], v)}
            errors={errors('surfaceGuidance', 'fields', field, 'unit')}
          />
          <SelectField
            label={`Format of ${field}`}
            value={getIn(spec, ['format'])}
            options={FIELD_FORMATS}
            empty="(number for numbers, else text)"
            onValue={(v) => update(['surfaceGuidance', 'fields', field, 'format'], v)}
            errors={errors('surfaceGuidance', 'fields', field, 'format')}
          />
          <label class="inline-check">
            <input
              type="checkbox"
              checked={getIn(spec, ['hidden']) === true}
              onChange={(event) => update(['surfaceGuidance', 'fields', field, 'hidden'], event.currentTarget.checked ? true : undefined)}
            />{' '}
            Hide {field} from the stat row
          </label>
          <Button onClick={() => update(['surfaceGuidance', 'fields', field], undefined)}>{`Remove field ${field}`}</Button>
        </fieldset>
      ))}
      <div class="inline-form">
        <div class="field">
          <label for={nameId}>New field name</label>
          <input id={nameId} value={newName} onInput={(event) => setNewName(event.currentTarget.value)} />
        </div>
        <Button
          onClick={() => {
            if (!newName.trim()) return;
            add([newName.trim()]);
            setNewName('');
          }}
        >
          Add field
        </Button>
        {suggestions.length > 0 && (
          <Button onClick={() => add(suggestions)}>{`Add fields of the example (${suggestions.join(', ')})`}</Button>
        )}
      </div>
    </fieldset>
  );
}
