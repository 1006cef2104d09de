import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { OAuthTokens } from '../providers/oauth-tokens.service';
import { INSTALL_SCOPES } from './dto/marketplace.dto';
import { AuthorizeDto } from './dto/authorize.dto';
import { InstallsService } from './installs.service';
import { MarketplaceService } from './marketplace.service';

/**
 * An app starting an install from its own site: the authorization-code flow
 * with PKCE. The user reviews the request (`describe`), consents (`consent`),
 * the package is installed and the app gets a single-use code at one of its
 * registered redirect URIs, which it redeems at the token endpoint with its
 * code_verifier.
 */
@Injectable()
export class Authorizations {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly oauth: OAuthTokens,
    private readonly marketplace: MarketplaceService,
    private readonly installs: InstallsService,
  ) {}

  async describe(request: AuthorizeDto) {
    const { app, scopes, pkg } = await this.check(request);
    return {
      app: { name: app.name, client_id: request.client_id },
      package: { id: pkg.id, version: pkg.version },
      scopes,
      redirect_uri: request.redirect_uri,
    };
  }

  async consent(userId: string, request: AuthorizeDto): Promise<{ redirect_to: string; install_id: string }> {
    const { app, scopes, pkg } = await this.check(request);
    const { install } = await this.installs.install(userId, pkg.id, scopes);
    const code = await this.dataSource.transaction((manager) =>
      this.oauth.issueAuthorizationCode(manager, {
        appId: app.id,
        userId,
        packageId: pkg.id,
        redirectUri: request.redirect_uri,
        scopes,
        codeChallenge: request.code_challenge,
      }),
    );
    const target = new URL(request.redirect_uri);
    target.searchParams.set('code', code);
    if (request.state !== undefined) target.searchParams.set('state', request.state);
    return { redirect_to: target.toString(), install_id: install.id };
  }

  /** Everything is checked before the user is asked: an unregistered redirect URI is never redirected to. */
  private async check(request: AuthorizeDto) {
    const app = await this.oauth.clientByPublicId(request.client_id);
    if (!app) throw new ApiError('BAD_REQUEST', 'client_id is not a registered app');
    if (!app.redirect_uris.includes(request.redirect_uri))
      throw new ApiError('BAD_REQUEST', 'redirect_uri is not one of the app’s registered redirect_uris');
    const pkg = await this.marketplace.installable(request.package_id);
    if (pkg.app_id !== app.id) throw new ApiError('BAD_REQUEST', 'package_id does not belong to this app');
    const scopes = request.scope ? [...new Set(request.scope.split(' ').filter(Boolean))] : ['capabilities:execute'];
    const unknown = scopes.filter((s) => !(INSTALL_SCOPES as readonly string[]).includes(s) || !app.scopes.includes(s));
    if (unknown.length > 0)
      throw new ApiError('BAD_REQUEST', `scope ${unknown.join(', ')} cannot be granted; allowed: ${INSTALL_SCOPES.join(' ')}`);
    return { app, scopes, pkg };
  }
}
