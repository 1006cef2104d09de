/**
 * Every scope an app may hold, `<resource>:<permission>` as the spec shapes
 * them. An app is created with all of them unless it asks for fewer; a token
 * may narrow further with `scope`.
 */
export const PLATFORM_SCOPES = [
  'apps:read',
  'apps:write',
  'packages:read',
  'packages:write',
  'capabilities:execute',
  'webhooks:read',
  'webhooks:write',
  'events:write',
  'installs:read',
] as const;
export type PlatformScope = (typeof PLATFORM_SCOPES)[number];

export function isPlatformScope(value: string): value is PlatformScope {
  return (PLATFORM_SCOPES as readonly string[]).includes(value);
}
