import { ApiError } from '../../src/common/errors/api-error';
import { WebhookSecretSourceModule } from '../../src/modules/webhooks/webhook-secret-source.module';
import { MarketplaceModule } from '../../src/modules/marketplace/marketplace.module';
import { InstallsService } from '../../src/modules/marketplace/installs.service';
import { MediumContext, mediumContext } from './medium';

describe('InstallsService: the install and upgrade consent rule (medium: real module, real database)', () => {
  let ctx: MediumContext;
  let installs: InstallsService;

  /** The sealed refresh token of an install: a new token family seals a new one. */
  const sealedToken = async (installId: string): Promise<string | null> =>
    (await ctx.dataSource.query(`SELECT refresh_token_encrypted AS sealed FROM installs WHERE id = $1`, [installId]))[0].sealed;

  beforeAll(async () => {
    // Marketplace reaches conformance through packages; conformance's webhook-secret port is bound by the webhooks area.
    ctx = await mediumContext([MarketplaceModule, WebhookSecretSourceModule]);
    installs = ctx.get(InstallsService);
  });

  afterAll(async () => {
    await ctx?.close();
  });

  it('installs the published version with capabilities:execute, and answers the same install when nothing changed', async () => {
    const user = await ctx.make.user();
    const pkg = await ctx.make.publishedPackage({ version: '1.0.0' });
    const first = await installs.install(user.id, pkg.id);
    expect(first).toMatchObject({
      created: true,
      install: { package_id: pkg.id, package_slug: pkg.slug, version: '1.0.0', scopes: ['capabilities:execute'], status: 'active' },
    });
    const token = await sealedToken(first.install.id);
    expect(token).toEqual(expect.any(String));

    const again = await installs.install(user.id, pkg.id);
    expect(again).toEqual({ created: false, install: first.install });
    expect(await sealedToken(first.install.id)).toBe(token);
    expect((await installs.list(user.id)).installs.map((i) => i.id)).toEqual([first.install.id]);
  });

  it('takes installing again as consent: the install moves to the published version and keeps its token family', async () => {
    const user = await ctx.make.user();
    const pkg = await ctx.make.publishedPackage({ version: '1.0.0' });
    const first = await installs.install(user.id, pkg.id);
    const token = await sealedToken(first.install.id);
    await ctx.make.publishVersion(pkg.id, { version: '1.1.0' });
    expect((await installs.list(user.id)).installs[0].version).toBe('1.0.0');

    const consented = await installs.install(user.id, pkg.id);
    expect(consented).toMatchObject({ created: false, install: { id: first.install.id, version: '1.1.0', upgrade: null } });
    expect(await sealedToken(first.install.id)).toBe(token);
  });

  it('narrows the grant to the scopes given, with a new token family; widening keeps the family', async () => {
    const user = await ctx.make.user();
    const pkg = await ctx.make.publishedPackage({ appScopes: ['capabilities:execute', 'installs:read'] });
    const first = await installs.install(user.id, pkg.id, ['capabilities:execute', 'installs:read']);
    expect(first.install.scopes).toEqual(['capabilities:execute', 'installs:read']);
    const broad = await sealedToken(first.install.id);

    const narrowed = await installs.install(user.id, pkg.id, ['capabilities:execute']);
    expect(narrowed.install.scopes).toEqual(['capabilities:execute']);
    const narrow = await sealedToken(first.install.id);
    expect(narrow).not.toBe(broad);

    // Without scopes, installing again keeps the granted ones.
    expect((await installs.install(user.id, pkg.id)).install.scopes).toEqual(['capabilities:execute']);
    expect(await sealedToken(first.install.id)).toBe(narrow);
    // Widening revokes nothing: the token family stays.
    const widened = await installs.install(user.id, pkg.id, ['capabilities:execute', 'installs:read']);
    expect(widened.install.scopes).toEqual(['capabilities:execute', 'installs:read']);
    expect(await sealedToken(first.install.id)).toBe(narrow);
  });

  it('refuses a scope the app of the package does not hold, naming what it holds', async () => {
    const user = await ctx.make.user();
    const pkg = await ctx.make.publishedPackage({ appScopes: ['capabilities:execute'] });
    const refused = await installs.install(user.id, pkg.id, ['capabilities:execute', 'installs:read']).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({
      code: 'BAD_REQUEST',
      message: 'scope installs:read cannot be granted: the app of this package does not hold it; it holds capabilities:execute',
    });
    expect((await installs.list(user.id)).installs).toEqual([]);
  });

  it('refuses a suspended package like an unpublished one', async () => {
    const user = await ctx.make.user();
    const pkg = await ctx.make.publishedPackage();
    await ctx.make.suspendPackage(pkg.id);
    await expect(installs.install(user.id, pkg.id)).rejects.toMatchObject({ code: 'NOT_FOUND', message: `No published package ${pkg.id}` });
  });

  it('uninstalls once, answers a repeat with the removed install, and installs afresh after', async () => {
    const user = await ctx.make.user();
    const pkg = await ctx.make.publishedPackage();
    const { install } = await installs.install(user.id, pkg.id);
    const removed = await installs.uninstall(user.id, install.id);
    expect(removed).toMatchObject({ id: install.id, status: 'removed', removed_reason: 'user_uninstalled' });
    expect(await installs.uninstall(user.id, install.id)).toEqual(removed);
    const fresh = await installs.install(user.id, pkg.id);
    expect(fresh.created).toBe(true);
    expect(fresh.install.id).not.toBe(install.id);
  });

  it("answers another user's install as not found", async () => {
    const owner = await ctx.make.user();
    const stranger = await ctx.make.user();
    const pkg = await ctx.make.publishedPackage();
    const { install } = await installs.install(owner.id, pkg.id);
    await expect(installs.uninstall(stranger.id, install.id)).rejects.toMatchObject({ code: 'NOT_FOUND' });
    expect((await installs.list(owner.id)).installs).toHaveLength(1);
  });
});
