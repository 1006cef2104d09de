import { Module } from '@nestjs/common';
import { ProvidersModule } from '../providers/providers.module';
import { Authorizations } from './authorizations.service';
import { AuthorizeController } from './authorize.controller';
import { InstallsPersonalData } from './installs.personal-data';
import { InstallsService } from './installs.service';
import { MarketplaceController } from './marketplace.controller';
import { MarketplaceService } from './marketplace.service';

/** Discovery of published packages and the user's installs. */
@Module({
  imports: [ProvidersModule],
  controllers: [MarketplaceController, AuthorizeController],
  providers: [MarketplaceService, InstallsService, InstallsPersonalData, Authorizations],
  exports: [MarketplaceService, InstallsService],
})
export class MarketplaceModule {}
