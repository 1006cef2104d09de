import { Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import { InstallsService } from '../marketplace/installs.service';
import { CapabilityDescriptor, Component, COMPONENTS, Intent, Placement, PLACEMENTS, TYPICAL_COMPONENTS } from '@soul-service/rules';
import { CachedState, StateCache } from '../runtime-bridge/state-cache';
import { widgetParams } from '../runtime-bridge/state-poller';

/** The first example's `input` of an action capability, when the provider gave one. */
function exampleInput(capability: CapabilityDescriptor): Record<string, unknown> | null {
  const first = capability.examples?.[0];
  if (!first || typeof first !== 'object') return null;
  const input = (first as { input?: unknown }).input;
  return input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : null;
}

/**
 * The data a surface shows for a state capability: the widget copy (polled
 * with the widget params), or the last copy when it was fetched with the same
 * params and is newer (a user's call with the widget params refreshes the
 * widget too); a call with other params never shows.
 */
export function widgetState(
  capability: CapabilityDescriptor,
  widget: CachedState | undefined,
  last: CachedState | undefined,
): CachedState | undefined {
  if (capability.type !== 'state') return last;
  const params = widgetParams(capability);
  const sameParams = last?.source === 'state' && params !== undefined && JSON.stringify(last.params) === JSON.stringify(params);
  if (!sameParams) return widget;
  if (!widget || Date.parse(last.fetchedAt) > Date.parse(widget.fetchedAt)) return last;
  return widget;
}

/** Most urgent first: what needs the user's attention leads a surface, background context and deep dives follow. */
const INTENT_ORDER: Intent[] = ['notification', 'actionable_insight', 'ambient_context', 'deep_dive'];

/**
 * Component models per placement for the signed-in user, built from the
 * capabilities of their installs that ask for the placement, with the data
 * cached by the runtime bridge (state answers, latest realtime and webhook
 * events). The service owns rendering: providers only name the components.
 */
@Injectable()
export class SurfacesService {
  constructor(
    private readonly installs: InstallsService,
    private readonly cache: StateCache,
  ) {}

  async forPlacement(userId: string, placement: string) {
    if (!PLACEMENTS.includes(placement as Placement)) {
      throw new ApiError('NOT_FOUND', `No placement ${placement}; placements are ${PLACEMENTS.join(', ')}`);
    }
    const entries: Array<{
      target: Awaited<ReturnType<InstallsService['activeTargets']>>[number];
      capability: Awaited<ReturnType<InstallsService['activeTargets']>>[number]['capabilities'][number];
    }> = [];
    for (const target of await this.installs.activeTargets(userId)) {
      if (target.package_suspended || target.developer_suspended) continue;
      for (const capability of target.capabilities) {
        if (capability.surfaceGuidance?.placement?.includes(placement as Placement)) entries.push({ target, capability });
      }
    }
    // The daily brief is a digest of what the home widgets do not already show: a capability placed on both is a home
    // widget only (docs/components.md, "Placements").
    const shown =
      placement === 'daily_brief' ? entries.filter((e) => !e.capability.surfaceGuidance.placement.includes('home_widgets')) : entries;
    const keys = shown.map((e) => ({ installId: e.target.install_id, capability: e.capability.name }));
    const [last, widget] = await Promise.all([
      this.cache.getMany(keys),
      this.cache.getMany(keys.map((k) => ({ ...k, copy: 'widget' as const }))),
    ]);
    const components = shown.map((entry, i) => {
      const guidance = entry.capability.surfaceGuidance;
      const preferred = (guidance.preferredComponents ?? []).filter((c) => COMPONENTS.includes(c));
      const component: Component = preferred[0] ?? TYPICAL_COMPONENTS[entry.capability.type][0];
      const state = widgetState(entry.capability, widget[i], last[i]);
      return {
        package: { id: entry.target.package_id, name: entry.target.package_name, installId: entry.target.install_id },
        capability: { name: entry.capability.name, mode: entry.capability.type, description: entry.capability.description },
        intent: guidance.intent,
        component,
        // Every component the provider prefers, in order: the app renders each that fits the data (docs/components.md).
        components: preferred.length > 0 ? preferred : [component],
        ...(guidance.title ? { title: guidance.title } : {}),
        ...(guidance.fields && Object.keys(guidance.fields).length > 0 ? { fields: guidance.fields } : {}),
        // State: the params the widget is polled with (the schema's defaults); null when the schema requires a field
        // without a default, so the widget has nothing to show (docs/components.md, "Which params a widget shows").
        ...(entry.capability.type === 'state' ? { params: widgetParams(entry.capability) ?? null } : {}),
        data: state?.data ?? null,
        fetchedAt: state?.fetchedAt ?? null,
        stale: state ? state.stale : false,
        ...(state?.degraded ? { degraded: true } : {}),
        // The service renders the confirmation form of an action, so it needs the input schema (and an example to start from).
        ...(entry.capability.type === 'action'
          ? { input: { schema: entry.capability.schema, example: exampleInput(entry.capability) } }
          : {}),
      };
    });
    components.sort((a, b) => INTENT_ORDER.indexOf(a.intent) - INTENT_ORDER.indexOf(b.intent));
    return { placement, components };
  }
}
