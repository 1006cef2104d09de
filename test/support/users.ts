import request from 'supertest';
import { TestIdentityProvider } from './identity-provider';

export interface LoggedInUser {
  id: string;
  token: string;
  auth: { authorization: string };
}

/** Logs a user in through the real login endpoint with a token from the test identity provider. */
export async function login(
  url: string,
  idp: TestIdentityProvider,
  who: { sub: string; name?: string; email?: string; emailVerified?: boolean },
): Promise<LoggedInUser> {
  const res = await request(url)
    .post('/v1/auth/login')
    .send({ firebase_token: await idp.token(who) })
    .expect(200);
  return { id: res.body.user.id, token: res.body.token, auth: { authorization: `Bearer ${res.body.token}` } };
}
