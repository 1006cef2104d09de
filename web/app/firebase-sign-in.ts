/**
 * Firebase Authentication web sign-in (Google and email link). Loaded with a
 * dynamic import only when the service says Firebase is configured, so the
 * app's main bundle does not carry the Firebase SDK.
 */
import { FirebaseApp, getApps, initializeApp } from 'firebase/app';
import {
  Auth,
  getAuth,
  GoogleAuthProvider,
  isSignInWithEmailLink,
  sendSignInLinkToEmail,
  signInWithEmailLink,
  signInWithPopup,
} from 'firebase/auth';

export interface FirebaseWebConfig {
  apiKey: string;
  authDomain: string;
  projectId: string;
}

/** The address an email link was sent to, so the link opened in this browser needs no retyping (Firebase's recommended flow). */
const EMAIL_KEY = 'soul.app.signin.email';

function authOf(config: FirebaseWebConfig): Auth {
  const app: FirebaseApp = getApps()[0] ?? initializeApp(config);
  return getAuth(app);
}

/** Google in a popup; resolves to the Firebase ID token the service's login exchanges. */
export async function signInWithGoogle(config: FirebaseWebConfig): Promise<string> {
  const credential = await signInWithPopup(authOf(config), new GoogleAuthProvider());
  return credential.user.getIdToken();
}

/** Mails a sign-in link that comes back to `returnUrl` (the page the person wanted). */
export async function sendEmailLink(config: FirebaseWebConfig, email: string, returnUrl: string): Promise<void> {
  await sendSignInLinkToEmail(authOf(config), email, { url: returnUrl, handleCodeInApp: true });
  localStorage.setItem(EMAIL_KEY, email);
}

export function isEmailLink(config: FirebaseWebConfig, href: string): boolean {
  return isSignInWithEmailLink(authOf(config), href);
}

export function rememberedEmail(): string | null {
  return localStorage.getItem(EMAIL_KEY);
}

/** Completes an email-link sign-in; resolves to the Firebase ID token. */
export async function completeEmailLink(config: FirebaseWebConfig, email: string, href: string): Promise<string> {
  const credential = await signInWithEmailLink(authOf(config), email, href);
  localStorage.removeItem(EMAIL_KEY);
  return credential.user.getIdToken();
}
