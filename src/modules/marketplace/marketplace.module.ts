import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { PackagesModule } from '../packages/packages.module';
import { ProvidersModule } from '../providers/providers.module';
import { Authorizations } from './authorizations.service';
import { AuthorizeController } from './authorize.controller';
import { CatalogRepository } from './catalog.repository';
import { InstallsPersonalData } from './installs.personal-data';
import { InstallsRepository } from './installs.repository';
import { InstallTargets } from './install-targets';
import { InstallsService } from './installs.service';
import { MarketplaceController } from './marketplace.controller';
import { MarketplaceService } from './marketplace.service';

/** Discovery of published packages and the user's installs. */
@Module({
  imports: [AccessModule, ProvidersModule, PackagesModule],
  controllers: [MarketplaceController, AuthorizeController],
  providers: [
    MarketplaceService,
    InstallsService,
    InstallTargets,
    InstallsPersonalData,
    Authorizations,
    InstallsRepository,
    CatalogRepository,
  ],
  // InstallsRepository is exported for reading only; installs are written through InstallsService.
  exports: [MarketplaceService, InstallsService, InstallsRepository],
})
export class MarketplaceModule {}
