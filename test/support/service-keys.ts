import { createLocalJWKSet, createRemoteJWKSet, JSONWebKeySet, JWTVerifyGetKey } from 'jose';

/**
 * The key sets of the services a test file started (the harness registers each
 * api it starts: its `/.well-known/jwks.json`), so the test provider runtime
 * can verify runtime tokens by default without being told where the service
 * listens. Per test file (jest gives every file its own module registry).
 */
const remote = new Map<string, JWTVerifyGetKey>();
const local: JWTVerifyGetKey[] = [];

/** Trusts the key set a service publishes at `<baseUrl>/.well-known/jwks.json`; returns the function that forgets it. */
export function trustService(baseUrl: string): () => void {
  const jwksUrl = `${baseUrl.replace(/\/+$/, '')}/.well-known/jwks.json`;
  if (!remote.has(jwksUrl)) remote.set(jwksUrl, createRemoteJWKSet(new URL(jwksUrl)));
  return () => void remote.delete(jwksUrl);
}

/** Trusts a key set given as JSON (tests that mint runtime tokens without starting an api). */
export function trustKeys(jwks: JSONWebKeySet): void {
  local.push(createLocalJWKSet(jwks));
}

/** Whether any service or key set is trusted: without one, the test runtime only asks for a bearer token. */
export function anyServiceTrusted(): boolean {
  return remote.size > 0 || local.length > 0;
}

/** A key resolver over every trusted key set: the first that has a key for the token's `kid` answers. */
export const trustedServiceKeys: JWTVerifyGetKey = async (header, token) => {
  let lastError: unknown = new Error('no trusted service key set');
  for (const getKey of [...local, ...remote.values()]) {
    try {
      return await getKey(header, token);
    } catch (error) {
      lastError = error;
    }
  }
  throw lastError;
};
