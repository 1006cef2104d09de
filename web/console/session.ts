import { SessionStore } from '../shared/session';

export interface DeveloperSession {
  token: string;
  expiresAt: string;
  email: string;
}

export const session = new SessionStore<DeveloperSession>('soul.console.session');

/** The provider platform with the developer's console token; a 401 signs the page out. */
export const api = session.api;
