import { Body, Controller, Headers, HttpCode, Post, Res } from '@nestjs/common';
import { ApiBasicAuth, ApiBody, ApiConsumes, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { OAuthTokens, oauthError, TokenResponse } from './oauth-tokens.service';
import { TokenRequestDto, TokenResponseDto } from './dto/provider-responses.dto';
import { PlatformProblems } from '../../common/openapi/error-responses';
import { isObject } from '../../common/json';

type TokenRequest = Record<string, unknown>;

function field(body: TokenRequest, name: string): string | undefined {
  const value = body[name];
  return typeof value === 'string' ? value : undefined;
}

const BASIC_CHALLENGE = { 'WWW-Authenticate': 'Basic realm="service", charset="UTF-8"' };

/**
 * `Authorization: Basic` per RFC 6749 §2.3.1: form-urlencoded id and secret,
 * base64 encoded. No Basic header gives null; a Basic header that does not
 * decode to `id:secret` is a failed client authentication (401), never a crash.
 */
function basicCredentials(header: string | undefined): { id: string; secret: string } | null {
  if (!header || !/^Basic\b/i.test(header)) return null;
  const malformed = () => oauthError('invalid_client', 'invalid_client', 'The Basic credentials are malformed', BASIC_CHALLENGE);
  const match = /^Basic ([A-Za-z0-9+/]+={0,2})$/i.exec(header);
  if (!match) throw malformed();
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw malformed();
  try {
    const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { id: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) };
  } catch {
    // decodeURIComponent throws URIError on a stray or incomplete %-escape (`a%zz`).
    throw malformed();
  }
}

@ApiTags('oauth')
@Controller('v1/auth')
export class OAuthController {
  constructor(private readonly oauth: OAuthTokens) {}

  @Post('token')
  @HttpCode(200)
  @ApiOperation({
    summary:
      'OAuth 2.0 token endpoint: client_credentials and refresh_token grants (form or JSON body, Basic or body client authentication)',
  })
  @ApiOkResponse({ type: TokenResponseDto })
  @ApiConsumes('application/x-www-form-urlencoded', 'application/json')
  @ApiBody({ type: TokenRequestDto })
  @ApiBasicAuth('basic')
  @PlatformProblems(401, 403)
  async token(
    @Body() body: TokenRequest | undefined,
    @Headers('authorization') authorization: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<TokenResponse> {
    void reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache');
    const params: TokenRequest = isObject(body) ? body : {};
    const basic = basicCredentials(authorization);
    const bodyId = field(params, 'client_id');
    const bodySecret = field(params, 'client_secret');
    if (basic && bodySecret !== undefined)
      throw oauthError('bad_request', 'invalid_request', 'Authenticate the client with one method only: Basic or body parameters');
    const clientId = basic?.id ?? bodyId;
    const clientSecret = basic?.secret ?? bodySecret;
    if (!clientId || !clientSecret) {
      throw oauthError(
        'invalid_client',
        'invalid_client',
        'Client authentication is required (HTTP Basic or client_id and client_secret)',
        BASIC_CHALLENGE,
      );
    }
    const grantType = field(params, 'grant_type');
    if (!grantType) throw oauthError('missing_field', 'invalid_request', 'grant_type is required');
    switch (grantType) {
      case 'client_credentials':
        return this.oauth.clientCredentials(clientId, clientSecret, field(params, 'scope'), basic !== null);
      case 'refresh_token': {
        const refreshToken = field(params, 'refresh_token');
        if (!refreshToken) throw oauthError('missing_field', 'invalid_request', 'refresh_token is required for the refresh_token grant');
        return this.oauth.refresh(clientId, clientSecret, refreshToken, basic !== null);
      }
      case 'authorization_code': {
        const code = field(params, 'code');
        if (!code) throw oauthError('missing_field', 'invalid_request', 'code is required for the authorization_code grant');
        return this.oauth.authorizationCode(
          clientId,
          clientSecret,
          code,
          field(params, 'redirect_uri'),
          field(params, 'code_verifier'),
          basic !== null,
        );
      }
      default:
        throw oauthError(
          'unsupported_grant_type',
          'unsupported_grant_type',
          `grant_type ${grantType} is not supported; use client_credentials, authorization_code or refresh_token`,
        );
    }
  }
}
