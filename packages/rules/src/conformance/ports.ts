/**
 * What a full conformance run needs from whoever hosts it, as ports: the
 * service passes its outbound client (which refuses private addresses) and its
 * runtime token issuer; the CLI passes a plain client for `https://localhost`
 * and its own tokens. The rules call a runtime only through these.
 */

/** One request to a runtime, as the suite makes it. */
export interface RuntimeRequest {
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** Aborts the request, or the body still streaming in (fetch's semantics). */
  signal?: AbortSignal;
}

/** The error code a port's `fetch` fails with when its address policy refuses the connection. */
export const BLOCKED_TARGET = 'EBLOCKEDTARGET';

export interface HttpPort {
  /** fetch semantics; a connection the host's policy refuses rejects with an error whose `code` is `BLOCKED_TARGET`. */
  fetch(url: string, init: RuntimeRequest): Promise<Response>;
  /**
   * The host's registration-time check of a runtime or webhook URL (HTTPS, no
   * credentials, allowed addresses): throws why it may not be called. A
   * thrown error's `detail`, else its message, becomes the checks' detail.
   */
  assertCallable(url: string, field: string): Promise<unknown>;
}

/** Who a runtime call is for: the claims of its runtime token. */
export interface RuntimeCall {
  appId: string;
  userId: string;
  installId: string;
  requestId: string;
  scopes: readonly string[];
  livemode: boolean;
}

export interface RuntimeTokenPort {
  /** A runtime token for the call, as live traffic gets one; `issuedAt` in the past makes an expired one. */
  mint(call: RuntimeCall, options?: { issuedAt?: Date }): Promise<string>;
}

/** Headers of the provider runtime contract (docs/runtime.md) that every call carries. */
export const LIVEMODE_HEADER = 'X-Service-Livemode';
export const REQUEST_ID_HEADER = 'X-Service-Request-Id';

/** `Authorization`, `X-Service-Request-Id` and `X-Service-Livemode` of a runtime call. */
export function runtimeCallHeaders(token: string, requestId: string, livemode: boolean): Record<string, string> {
  return { Authorization: `Bearer ${token}`, [REQUEST_ID_HEADER]: requestId, [LIVEMODE_HEADER]: String(livemode) };
}
