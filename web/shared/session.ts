import { useEffect, useState } from 'preact/hooks';
import { ApiFailure, request } from './api';

/**
 * The signed-in token of one page family (`app` or `console`), kept in
 * sessionStorage: it survives a reload but not closing the tab, and it never
 * leaves this origin. Components subscribe to changes with `useSession`.
 */
export class SessionStore<T extends { token: string }> {
  private listeners = new Set<(value: T | null) => void>();

  constructor(private readonly key: string) {}

  get(): T | null {
    try {
      const raw = sessionStorage.getItem(this.key);
      return raw ? (JSON.parse(raw) as T) : null;
    } catch {
      return null;
    }
  }

  set(value: T | null): void {
    if (value) sessionStorage.setItem(this.key, JSON.stringify(value));
    else sessionStorage.removeItem(this.key);
    for (const listener of this.listeners) listener(value);
  }

  subscribe(listener: (value: T | null) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Calls the API with this session's token; a 401 (expired or revoked) signs the page out. */
  readonly api = async <R = Record<string, unknown>>(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<R> => {
    try {
      return await request<R>(method, path, { token: this.get()?.token, body, idempotencyKey });
    } catch (error) {
      if (error instanceof ApiFailure && error.status === 401) this.set(null);
      throw error;
    }
  };
}

export function useSession<T extends { token: string }>(store: SessionStore<T>): T | null {
  const [value, setValue] = useState(store.get());
  useEffect(() => store.subscribe(setValue), [store]);
  return value;
}
