import { Module } from '@nestjs/common';
import { ConformanceModule } from '../conformance/conformance.module';
import { ProvidersModule } from '../providers/providers.module';
import { DescriptorSchemaController } from './descriptor-schema.controller';
import { OperatorPackagesController } from './operator-packages.controller';
import { PackageVersionsRepository } from './package-versions.repository';
import { PackagesController } from './packages.controller';
import { PackagesRepository } from './packages.repository';
import { PackagesService } from './packages.service';
import { VersionLifecycle } from './version-lifecycle.service';

/** Packages, versions, the submission gate, review, publication and suspension. */
@Module({
  imports: [ProvidersModule, ConformanceModule],
  controllers: [PackagesController, OperatorPackagesController, DescriptorSchemaController],
  providers: [PackagesService, VersionLifecycle, PackagesRepository, PackageVersionsRepository],
  // The repositories are exported for reading only; packages and versions are written through the services.
  exports: [PackagesService, VersionLifecycle, PackagesRepository, PackageVersionsRepository],
})
export class PackagesModule {}
