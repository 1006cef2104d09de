import request from 'supertest';

/**
 * Sets an app's webhook profile (PUT /v1/providers/apps/:id/webhook) and
 * answers its signing secret. An app registered with a `webhook_url` already
 * has a profile, whose secret the registration revealed once
 * (`webhook_secret`): the PUT then updates it (200). An app without one gets
 * its profile and secret from the PUT (201).
 */
export async function subscribeWebhook(
  url: string,
  app: { id: string; webhook_secret?: string },
  auth: Record<string, string>,
  body: Record<string, unknown>,
): Promise<string> {
  const res = await request(url).put(`/v1/providers/apps/${app.id}/webhook`).set(auth).send(body);
  const expected = app.webhook_secret ? 200 : 201;
  if (res.status !== expected) throw new Error(`PUT webhook profile: expected ${expected}, got ${res.status} ${JSON.stringify(res.body)}`);
  const secret = (res.body.secret as string | undefined) ?? app.webhook_secret;
  if (!secret) throw new Error('no webhook signing secret was revealed');
  return secret;
}
