import { request } from '../shared/api';
import { SessionStore } from '../shared/session';

export interface UserSession {
  token: string;
  expiresAt: string;
  user: { id: string; name: string | null; email: string | null };
}

export const session = new SessionStore<UserSession>('soul.app.session');

/** The user API with the signed-in user's token; a 401 signs the page out. */
export async function api<T = Record<string, unknown>>(method: string, path: string, body?: unknown, idempotencyKey?: string): Promise<T> {
  try {
    return await request<T>(method, path, { token: session.get()?.token, body, idempotencyKey });
  } catch (error) {
    if (error && typeof error === 'object' && (error as { status?: number }).status === 401) session.set(null);
    throw error;
  }
}
