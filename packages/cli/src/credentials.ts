import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** A saved login for one service origin. */
export interface SavedLogin {
  token: string;
  /** When the token stops working (console tokens expire), ISO 8601; absent when unknown. */
  expires_at?: string;
  /** Who logged in, for `whoami` without a call and for the person reading the file. */
  email?: string;
}

interface CredentialsFile {
  /** Logins by service origin, so a local service and a hosted one can both be logged in. */
  logins: Record<string, SavedLogin>;
}

/** `$SOUL_CONFIG_DIR`, else `$XDG_CONFIG_HOME/soul`, else `~/.config/soul`. */
export function configDir(env: Record<string, string | undefined>): string {
  if (env.SOUL_CONFIG_DIR) return env.SOUL_CONFIG_DIR;
  return join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'soul');
}

export function credentialsPath(env: Record<string, string | undefined>): string {
  return join(configDir(env), 'credentials.json');
}

function read(path: string): CredentialsFile {
  try {
    const parsed = JSON.parse(readFileSync(path, 'utf8')) as Partial<CredentialsFile>;
    return { logins: parsed.logins && typeof parsed.logins === 'object' ? parsed.logins : {} };
  } catch {
    return { logins: {} };
  }
}

/** The saved login for this origin, unless it has expired. */
export function savedLogin(env: Record<string, string | undefined>, baseUrl: string): SavedLogin | null {
  const login = read(credentialsPath(env)).logins[baseUrl];
  if (!login || typeof login.token !== 'string') return null;
  if (login.expires_at && Date.parse(login.expires_at) <= Date.now()) return null;
  return login;
}

/**
 * Saves (or with null, forgets) the login for this origin. The file is written whole to a temporary name with
 * mode 0600 and renamed over the old one, so no other user can read a token, even for a moment.
 */
export function saveLogin(env: Record<string, string | undefined>, baseUrl: string, login: SavedLogin | null): string {
  const path = credentialsPath(env);
  const file = read(path);
  if (login) file.logins[baseUrl] = login;
  else delete file.logins[baseUrl];
  mkdirSync(configDir(env), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  writeFileSync(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temporary, 0o600);
  renameSync(temporary, path);
  return path;
}
