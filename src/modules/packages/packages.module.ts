import { Module } from '@nestjs/common';
import { ConformanceModule } from '../conformance/conformance.module';
import { ProvidersModule } from '../providers/providers.module';
import { OperatorPackagesController } from './operator-packages.controller';
import { PackagesController } from './packages.controller';
import { PackagesService } from './packages.service';
import { VersionLifecycle } from './version-lifecycle.service';

/** Packages, versions, the submission gate, review, publication and suspension. */
@Module({
  imports: [ProvidersModule, ConformanceModule],
  controllers: [PackagesController, OperatorPackagesController],
  providers: [PackagesService, VersionLifecycle],
  exports: [PackagesService, VersionLifecycle],
})
export class PackagesModule {}
