import { randomBytes } from 'node:crypto';
import { Controller, Get, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { ApiError } from '../../../common/errors/api-error';
import { UserApiErrors } from '../../../common/openapi/error-responses';
import { JwksDto } from '../dto/auth-responses.dto';
import { DevAccounts } from './dev-accounts.service';
import { DevAccount, devSubject, DevIdentityKeys } from './dev-identity-keys';

/** Where the provider may send a signed-in browser back to: a path of the consumer app on this origin. */
const RETURN_PATH = /^\/app(?:\/[^\s#\\]*)?(?:\?[^\s#\\]*)?$/;
const STATE = /^[A-Za-z0-9_-]{8,128}$/;
const EMAIL = /^[^\s@]{1,64}@[^\s@]{1,190}\.[^\s@]{2,63}$/;

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

interface SignInQuery {
  redirect_uri?: string;
  state?: string;
  subject?: string;
  name?: string;
  email?: string;
}

/**
 * The development identity provider (`DEV_IDP`): a sign-in page where one picks
 * or creates a test user, as the Firebase Auth emulator does, and the JWKS its
 * ID tokens verify against. The page is plain HTML forms (no script), sends the
 * browser back to /app with the ID token in the URL fragment (never sent to a
 * server), and every route answers 404 when the provider is off.
 */
@ApiTags('development sign-in')
@Controller('dev-idp')
export class DevIdentityController {
  constructor(
    private readonly keys: DevIdentityKeys,
    private readonly accounts: DevAccounts,
  ) {}

  @Get('jwks.json')
  @ApiOperation({ summary: 'Public keys of the development identity provider (DEV_IDP); 404 when it is off' })
  @ApiOkResponse({ type: JwksDto })
  @UserApiErrors(404)
  jwks(): { keys: object[] } {
    this.ensureEnabled();
    return this.keys.jwks();
  }

  @Get('sign-in')
  @ApiOperation({ summary: 'Development sign-in page: pick or create a test user (DEV_IDP); 404 when it is off' })
  @ApiProduces('text/html')
  @ApiResponse({ status: 200, description: 'The sign-in page', content: { 'text/html': { schema: { type: 'string' } } } })
  @UserApiErrors(400, 404)
  async signInPage(@Query() query: SignInQuery, @Res() reply: FastifyReply): Promise<void> {
    this.ensureEnabled();
    const { returnTo, state } = this.returnOf(query);
    const accounts = await this.accounts.list();
    await this.sendPage(reply, returnTo, state, accounts, null);
  }

  /** Signs the chosen (or new) test user in and returns to the app: `<redirect_uri>#id_token=…&state=…`. */
  @Get('authorize')
  @ApiOperation({ summary: 'Sign a test user in and return to /app with an ID token in the URL fragment (DEV_IDP)' })
  @ApiResponse({
    status: 303,
    description: 'Back to `redirect_uri` with `#id_token=…&state=…`',
    headers: { Location: { description: '`<redirect_uri>#id_token=…&state=…`', schema: { type: 'string' } } },
    content: { 'text/plain': { schema: { type: 'string' } } },
  })
  @ApiResponse({
    status: 200,
    description: 'The page again, saying what to correct (a missing name, a bad email, a test user that no longer exists)',
    content: { 'text/html': { schema: { type: 'string' } } },
  })
  @UserApiErrors(400, 404)
  async authorize(@Query() query: SignInQuery, @Res() reply: FastifyReply): Promise<void> {
    this.ensureEnabled();
    const { returnTo, state } = this.returnOf(query);
    let account: DevAccount | null;
    if (query.subject) {
      account = await this.accounts.find(String(query.subject));
      if (!account) return this.sendPage(reply, returnTo, state, await this.accounts.list(), 'That test user no longer exists.');
    } else {
      const name = String(query.name ?? '').trim();
      const email = String(query.email ?? '').trim();
      const problem =
        name.length === 0 || name.length > 100
          ? 'Enter a name (at most 100 characters).'
          : !EMAIL.test(email)
            ? 'Enter an email address such as alice@example.com.'
            : null;
      if (problem) return this.sendPage(reply, returnTo, state, await this.accounts.list(), problem);
      account = { subject: devSubject(email), name, email: email.toLowerCase() };
    }
    const token = await this.keys.idToken(account);
    const fragment = new URLSearchParams({ id_token: token, state }).toString();
    await reply
      .code(303)
      .header('location', `${returnTo}#${fragment}`)
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .type('text/plain; charset=utf-8')
      .send(`Signed in: returning to ${returnTo}`);
  }

  private ensureEnabled(): void {
    if (!this.keys.enabled) throw new ApiError('NOT_FOUND', 'The development identity provider is off (DEV_IDP)');
  }

  private returnOf(query: SignInQuery): { returnTo: string; state: string } {
    const returnTo = String(query.redirect_uri ?? '/app/');
    const state = String(query.state ?? '');
    if (!RETURN_PATH.test(returnTo)) throw new ApiError('BAD_REQUEST', 'redirect_uri must be a path under /app on this service');
    if (!STATE.test(state)) throw new ApiError('BAD_REQUEST', 'state must be 8-128 letters, digits, - or _');
    return { returnTo, state };
  }

  private async sendPage(
    reply: FastifyReply,
    returnTo: string,
    state: string,
    accounts: DevAccount[],
    error: string | null,
  ): Promise<void> {
    const nonce = randomBytes(16).toString('base64');
    const hidden = `<input type="hidden" name="redirect_uri" value="${escape(returnTo)}"><input type="hidden" name="state" value="${escape(state)}">`;
    const users =
      accounts.length === 0
        ? '<p>No test users yet: create the first one below.</p>'
        : `<ul class="users">${accounts
            .map(
              (a) =>
                `<li><form method="get" action="/dev-idp/authorize">${hidden}<input type="hidden" name="subject" value="${escape(a.subject)}">` +
                `<button type="submit">Sign in as ${escape(a.name)} <span class="email">${escape(a.email)}</span></button></form></li>`,
            )
            .join('')}</ul>`;
    const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Development sign-in</title>
<style nonce="${nonce}">
body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f6f7f9;color:#1b1f24}
main{max-width:32rem;margin:2rem auto;padding:0 1rem}
section{background:#fff;border:1px solid #d0d5dd;border-radius:8px;padding:1rem 1.25rem;margin:1rem 0}
.note{background:#fff8e1;border:1px solid #8a6d00;border-radius:8px;padding:.75rem 1rem}
ul.users{list-style:none;padding:0;margin:0}ul.users li{margin:.5rem 0}
button{font:inherit;padding:.5rem .9rem;border-radius:6px;border:1px solid #1d4ed8;background:#1d4ed8;color:#fff;cursor:pointer;text-align:left}
ul.users button{width:100%;background:#fff;color:#1b1f24;border-color:#98a2b3}
.email{display:block;color:#475467;font-size:.9em}
label{display:block;font-weight:600;margin-top:.75rem}
input[type=text],input[type=email]{font:inherit;width:100%;box-sizing:border-box;padding:.45rem .6rem;border:1px solid #667085;border-radius:6px}
.actions{margin-top:1rem}
.error{color:#b42318;font-weight:600}
:focus-visible{outline:3px solid #1d4ed8;outline-offset:2px}
a{color:#1d4ed8}
</style>
</head>
<body>
<main>
<h1>Development sign-in</h1>
<p class="note">This service runs without a real identity provider, so this page stands in for one, like the Firebase Auth emulator. Pick a test user or create one: there is no password, and the email counts as verified. It is never available in production.</p>
${error ? `<p class="error" role="alert">${escape(error)}</p>` : ''}
<section aria-labelledby="users-heading">
<h2 id="users-heading">Test users</h2>
${users}
</section>
<section aria-labelledby="create-heading">
<h2 id="create-heading">Create a test user</h2>
<form method="get" action="/dev-idp/authorize">${hidden}
<label for="name">Name</label><input type="text" id="name" name="name" required maxlength="100" autocomplete="name">
<label for="email">Email</label><input type="email" id="email" name="email" required maxlength="254" autocomplete="email">
<div class="actions"><button type="submit">Create and sign in</button></div>
</form>
</section>
<p><a href="${escape(returnTo)}">Back to the app</a></p>
</main>
</body>
</html>`;
    await reply
      .code(200)
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header(
        'content-security-policy',
        `default-src 'none'; style-src 'nonce-${nonce}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`,
      )
      .send(html);
  }
}
