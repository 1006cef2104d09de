import { Injectable } from '@nestjs/common';
import { ApiError } from '../../common/errors/api-error';
import { InstallsService } from '../marketplace/installs.service';
import {
  CapabilityDescriptor,
  COMPONENTS,
  Component,
  Intent,
  Placement,
  PLACEMENTS,
  TYPICAL_COMPONENTS,
} from '../descriptors/capability-descriptor';
import { StateCache } from '../runtime-bridge/state-cache';

/** The first example's `input` of an action capability, when the provider gave one. */
function exampleInput(capability: CapabilityDescriptor): Record<string, unknown> | null {
  const first = capability.examples?.[0];
  if (!first || typeof first !== 'object') return null;
  const input = (first as { input?: unknown }).input;
  return input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : null;
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
    const cached = await this.cache.getMany(entries.map((e) => ({ installId: e.target.install_id, capability: e.capability.name })));
    const components = entries.map((entry, i) => {
      const preferred = (entry.capability.surfaceGuidance.preferredComponents ?? []).find((c) => COMPONENTS.includes(c));
      const component: Component = preferred ?? TYPICAL_COMPONENTS[entry.capability.type][0];
      const state = cached[i];
      return {
        package: { id: entry.target.package_id, name: entry.target.package_name, installId: entry.target.install_id },
        capability: { name: entry.capability.name, mode: entry.capability.type, description: entry.capability.description },
        intent: entry.capability.surfaceGuidance.intent,
        component,
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
