import { useEffect, useState } from 'preact/hooks';
import { createApiClient, type ApiClient } from './api';

/**
 * The signed-in token of one page family (`app` or `console`), kept in
 * localStorage so every tab of the browser shares it: signing in or out in one
 * tab does the same in the others (the `storage` event). It survives closing
 * the tab until the token expires, and it never leaves this origin.
 * Components subscribe to changes with `useSession`.
 */
export class SessionStore<T extends { token: string; expiresAt?: string }> {
  private listeners = new Set<(value: T | null) => void>();

  constructor(private readonly key: string) {
    if (typeof window !== 'undefined') {
      window.addEventListener('storage', (event) => {
        if (event.key !== this.key && event.key !== null) return;
        this.notify(this.get());
      });
    }
  }

  get(): T | null {
    try {
      const raw = localStorage.getItem(this.key);
      const value = raw ? (JSON.parse(raw) as T) : null;
      // An expired token would only earn a 401: treat it as signed out now.
      if (value?.expiresAt && Date.parse(value.expiresAt) <= Date.now()) return null;
      return value;
    } catch {
      return null;
    }
  }

  set(value: T | null): void {
    try {
      if (value) localStorage.setItem(this.key, JSON.stringify(value));
      else localStorage.removeItem(this.key);
    } catch {
      /* storage unavailable (private mode quota): the page still works until reload */
    }
    this.notify(value);
  }

  subscribe(listener: (value: T | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private notify(value: T | null): void {
    for (const listener of this.listeners) listener(value);
  }

  /** The API client with this session's token; a 401 (expired or revoked) signs the page out. */
  readonly api: ApiClient = createApiClient({ token: () => this.get()?.token, onUnauthorized: () => this.set(null) });
}

export function useSession<T extends { token: string; expiresAt?: string }>(store: SessionStore<T>): T | null {
  const [value, setValue] = useState(store.get());
  useEffect(() => store.subscribe(setValue), [store]);
  return value;
}
