/**
 * The live preview of a capability's widget: /app's own renderer (`Widget`, web/app/widgets.tsx) drawing the first
 * example's data with the capability's surface guidance, read-only (an action's form is shown but never sent).
 */
import { useEffect, useState } from 'preact/hooks';
import { Widget, type SurfaceComponent } from '../../app/widgets';
import { EXAMPLE_MEMBERS, modeOf, previewModel, requiredWithoutDefault } from './model';
import './widget-preview.css';

/** The value as it was `delay` ms after its last change: the preview redraws once the developer pauses. */
export function useDebounced<T>(value: T, delay: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delay);
    return () => clearTimeout(timer);
  }, [value, delay]);
  return settled;
}

export function WidgetPreview(props: { capability: unknown; packageName: string; headingId: string }) {
  const capability = useDebounced(props.capability, 250);
  const model = previewModel(capability, props.packageName) as unknown as SurfaceComponent;
  const mode = modeOf(capability);
  const member = EXAMPLE_MEMBERS[mode].response;
  const unpolled = mode === 'state' ? requiredWithoutDefault((capability as { schema?: unknown } | null)?.schema) : [];
  return (
    <div class="widget-preview" role="group" aria-labelledby={props.headingId}>
      <p class="preview-heading" id={props.headingId}>
        <strong>Preview in /app</strong> <span class="hint">drawn by the app’s own renderer from the first example’s {member}</span>
      </p>
      {model.data === null && <p class="hint">Add an example {member} to see the widget with data.</p>}
      {unpolled.length > 0 && (
        <p class="hint preview-warning">
          In /app this widget stays empty: the params schema requires {unpolled.map((n) => `“${n}”`).join(', ')} without a default, and
          widgets are polled with the defaults only.
        </p>
      )}
      <Widget model={model} readOnly />
    </div>
  );
}
