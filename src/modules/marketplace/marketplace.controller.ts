import { Body, Controller, Delete, Get, Param, Post, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AuthenticatedUser, CurrentUser } from '../access/authenticated-user';
import { UserApi } from '../access/user-auth.guard';
import { CatalogQueryDto, CreateInstallDto } from './dto/marketplace.dto';
import { InstallsService } from './installs.service';
import { MarketplaceService } from './marketplace.service';
import { CatalogListingDto, CatalogPageDto, InstallDto, InstallListDto } from './dto/marketplace-responses.dto';
import { UserApiErrors } from '../../common/openapi/error-responses';

@ApiTags('marketplace')
@UserApi()
@Controller('v1')
export class MarketplaceController {
  constructor(
    private readonly marketplace: MarketplaceService,
    private readonly installs: InstallsService,
  ) {}

  @Get('marketplace/packages')
  @ApiOperation({ summary: 'Published packages: text search, tier and capability type filters, paginated' })
  @ApiOkResponse({ type: CatalogPageDto })
  search(@Query() query: CatalogQueryDto) {
    return this.marketplace.search(query);
  }

  @Get('marketplace/packages/:slug')
  @ApiOkResponse({ type: CatalogListingDto })
  @ApiOperation({ summary: 'A published package by its slug' })
  bySlug(@Param('slug') slug: string) {
    return this.marketplace.bySlug(slug);
  }

  @Post('installs')
  @ApiOperation({
    summary:
      'Install a published package (201). Installing an installed package is consent again (200): the install moves to the published version (granting a pending upgrade), takes the scopes given (the granted ones when omitted) and clears a needed re-authorization with a new token family',
  })
  @ApiOkResponse({ type: InstallDto, description: 'Already installed: the install, after the consent was applied' })
  @ApiCreatedResponse({ type: InstallDto, description: 'Installed' })
  @UserApiErrors(404)
  async install(@CurrentUser() user: AuthenticatedUser, @Body() body: CreateInstallDto, @Res({ passthrough: true }) reply: FastifyReply) {
    const { created, install } = await this.installs.install(user.id, body.package_id, body.scopes);
    void reply.status(created ? 201 : 200);
    return install;
  }

  @Get('installs')
  @ApiOkResponse({ type: InstallListDto })
  @ApiOperation({ summary: "The user's active installs, oldest first" })
  list(@CurrentUser() user: AuthenticatedUser) {
    return this.installs.list(user.id);
  }

  @Delete('installs/:install_id')
  @ApiOperation({ summary: 'Uninstall; the provider receives install.removed' })
  @ApiOkResponse({ type: InstallDto, description: 'The removed install (also when it was already removed)' })
  uninstall(@CurrentUser() user: AuthenticatedUser, @Param('install_id') installId: string) {
    return this.installs.uninstall(user.id, installId);
  }
}
