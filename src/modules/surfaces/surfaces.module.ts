import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { MarketplaceModule } from '../marketplace/marketplace.module';
import { RuntimeBridgeModule } from '../runtime-bridge/runtime-bridge.module';
import { SurfacesController } from './surfaces.controller';
import { SurfacesService } from './surfaces.service';

/** Consumer surfaces: component models per placement. */
@Module({
  imports: [AccessModule, MarketplaceModule, RuntimeBridgeModule],
  controllers: [SurfacesController],
  providers: [SurfacesService],
})
export class SurfacesModule {}
