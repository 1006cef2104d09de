import { request } from '../shared/api';
import { SessionStore } from '../shared/session';

export interface DeveloperSession {
  token: string;
  expiresAt: string;
  email: string;
}

export const session = new SessionStore<DeveloperSession>('soul.console.session');

/** The provider platform with the developer's console token; a 401 signs the page out. */
export async function api<T = Record<string, unknown>>(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<T> {
  try {
    return await request<T>(method, path, { token: session.get()?.token, body, idempotencyKey });
  } catch (error) {
    if (error && typeof error === 'object' && (error as { status?: number }).status === 401) session.set(null);
    throw error;
  }
}
