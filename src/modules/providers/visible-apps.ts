import type { AppsService } from './apps.service';
import type { PlatformPrincipal } from './auth/platform-principal';

/**
 * The apps whose records (events, execution traces) a principal reads: an app
 * token its own app, a console token every app of its developer; narrowed to
 * `appId` when given, which must be one of them (`AppsService.owned`: 404 for
 * an unknown app, 403 for another developer's, as every app route answers).
 */
export async function visibleAppIds(apps: AppsService, principal: PlatformPrincipal, appId?: string): Promise<string[]> {
  if (appId !== undefined) return [(await apps.owned(principal, appId)).id];
  if (principal.kind === 'app') return [principal.appId];
  return (await apps.list(principal)).apps.map((app) => app.id);
}
