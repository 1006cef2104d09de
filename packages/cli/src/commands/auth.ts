import { ApiFailure, ok, type ApiClient } from '@soul-service/api-client';
import { UsageError, type Command, type CommandContext } from '../command';
import { credentialsPath, saveLogin, savedLogin } from '../credentials';

/** Who a token is: the developer of a console token, or the app of an app token (which has no account). */
async function identify(api: ApiClient): Promise<Record<string, unknown>> {
  try {
    const account = await ok(api.GET('/v1/providers/account'));
    return {
      kind: 'developer',
      id: account.id,
      email: account.email,
      company_name: account.company_name,
      mfa_enabled: account.mfa_enabled,
    };
  } catch (error) {
    // An app token may not read the console's account: it is an app, and sees only itself in the app list.
    if (!(error instanceof ApiFailure) || error.status !== 403) throw error;
    const { apps } = await ok(api.GET('/v1/providers/apps'));
    if (apps.length !== 1) throw error;
    return { kind: 'app', id: apps[0].id, name: apps[0].name, client_id: apps[0].client_id };
  }
}

function describe(who: Record<string, unknown>): string {
  return who.kind === 'developer'
    ? `${String(who.email)} (${String(who.company_name)}, ${String(who.id)})`
    : `app ${String(who.name)} (${String(who.id)})`;
}

/** Email, password and, when the account asks for it (`mfa_required`), the current TOTP code. */
async function passwordLogin(context: CommandContext): Promise<{ token: string; expires_at?: string; email: string }> {
  const prompter = context.prompter;
  if (!prompter) {
    throw new UsageError(
      'soul login cannot prompt here (CI=true or stdin is not a terminal).',
      'Set SOUL_TOKEN to a console or app token for every command, or save one with `soul login --token <token>`.',
    );
  }
  const email = typeof context.options.email === 'string' ? context.options.email : await prompter.ask('Email: ');
  const password = await prompter.askHidden('Password: ');
  const api = context.publicApi();
  let totp: string | undefined;
  for (;;) {
    try {
      const answer = await ok(api.POST('/v1/providers/auth/login', { body: { email, password, ...(totp ? { totp } : {}) } }));
      return { token: answer.token, expires_at: answer.expires_at, email };
    } catch (error) {
      // The first refusal of an MFA account asks for the code; a wrong code is reported, not asked again forever.
      if (!(error instanceof ApiFailure) || error.code !== 'mfa_required' || totp) throw error;
      totp = await prompter.ask('Two-factor code: ');
    }
  }
}

export const login: Command = {
  name: 'login',
  summary: 'Log in (email, password, two-factor code) and save the token, or save a given token',
  options: {
    email: { type: 'string', value: '<email>', description: 'The account email (asked otherwise)' },
  },
  examples: ['soul login', 'soul login --token "$SOUL_TOKEN"   # CI: or just set SOUL_TOKEN for every command'],
  async run(context) {
    const given = context.options.token ?? context.io.env.SOUL_TOKEN;
    let saved: { token: string; expires_at?: string; email?: string };
    if (typeof given === 'string' && given !== '') {
      saved = { token: given };
    } else {
      saved = await passwordLogin(context);
    }
    // A token is saved only once the service has accepted it.
    const who = await identify(context.apiWith(saved.token));
    const path = saveLogin(context.io.env, context.baseUrl, {
      token: saved.token,
      ...(saved.expires_at ? { expires_at: saved.expires_at } : {}),
      ...(typeof who.email === 'string' ? { email: who.email } : {}),
    });
    context.out.result(
      { logged_in: true, base_url: context.baseUrl, credentials_file: path, expires_at: saved.expires_at ?? null, ...who },
      [`Logged in to ${context.baseUrl} as ${describe(who)}.`, `Token saved in ${path} (readable by you only).`],
    );
  },
};

export const logout: Command = {
  name: 'logout',
  summary: 'End the console session and forget the saved token',
  async run(context) {
    const saved = savedLogin(context.io.env, context.baseUrl);
    if (saved) {
      // Ending the session server-side first: a copied token stops working too. An app token has no session.
      await context
        .apiWith(saved.token)
        .POST('/v1/providers/auth/logout')
        .catch(() => undefined);
    }
    saveLogin(context.io.env, context.baseUrl, null);
    context.out.result(
      { logged_out: true, base_url: context.baseUrl, credentials_file: credentialsPath(context.io.env) },
      `Logged out of ${context.baseUrl}.`,
    );
  },
};

export const whoami: Command = {
  name: 'whoami',
  summary: 'Show who the token in use belongs to, and where it came from',
  async run(context) {
    const who = await identify(context.api());
    const source = context.credential()?.source ?? null;
    context.out.result(
      { base_url: context.baseUrl, token_source: source, ...who },
      `${describe(who)} on ${context.baseUrl} (token from ${source}).`,
    );
  },
};
