import { SessionStore } from '../shared/session';

export interface UserSession {
  token: string;
  expiresAt: string;
  user: { id: string; name: string | null; email: string | null };
}

export const session = new SessionStore<UserSession>('soul.app.session');

/** The user API with the signed-in user's token; a 401 signs the page out. */
export const api = session.api;
