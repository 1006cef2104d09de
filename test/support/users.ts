import request from 'supertest';
import { OPERATOR_TOKEN } from './harness';
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

/** Moves a user to the enterprise tier through the operator API, so that many calls in one test stay under the rate limit. */
export async function raiseToEnterprise(url: string, user: { id: string }): Promise<void> {
  await request(url)
    .patch(`/v1/operator/users/${user.id}`)
    .set('authorization', `Bearer ${OPERATOR_TOKEN}`)
    .send({ tier: 'enterprise' })
    .expect(200);
}
