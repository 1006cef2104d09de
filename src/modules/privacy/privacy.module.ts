import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { DiscoveryModule } from '@nestjs/core';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuthModule } from '../auth/auth.module';
import { MarketplaceModule } from '../marketplace/marketplace.module';
import { SoulModule } from '../soul/soul.module';
import { AccountController } from './account.controller';
import { AccountDeletion } from './account-deletion.service';
import { AccountDeletionsRepository } from './account-deletions.repository';
import { AccountEraser } from './account-eraser.service';
import { ExportEntity } from './entities/export.entity';
import { ExportsRepository } from './exports.repository';
import { ExportsService } from './exports.service';
import { PersonalDataSections } from './personal-data-sections';
import { PrivacyController } from './privacy.controller';
import { SoulEraser } from './soul-eraser.service';
import { SoulRenewal } from './soul-renewal.service';
import { SoulExportBuilder } from './soul-export.builder';

/**
 * Exports and erasure of a user's personal data (the soul record, or the
 * whole account: `DELETE /v1/me`). Other areas take part by
 * marking a provider `@PersonalDataSection()`; they never import this module.
 * The exports processor lives in the worker role (privacy.worker.ts) and uses
 * the builder and service exported here.
 */
@Module({
  imports: [DiscoveryModule, TypeOrmModule.forFeature([ExportEntity]), AccessModule, AuthModule, SoulModule, MarketplaceModule],
  controllers: [PrivacyController, AccountController],
  providers: [
    PersonalDataSections,
    ExportsRepository,
    ExportsService,
    SoulExportBuilder,
    SoulEraser,
    SoulRenewal,
    AccountDeletionsRepository,
    AccountDeletion,
    AccountEraser,
  ],
  exports: [ExportsService, ExportsRepository, SoulExportBuilder, PersonalDataSections, AccountEraser],
})
export class PrivacyModule {}
