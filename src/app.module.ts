import { DynamicModule, Module, ModuleMetadata } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AppConfig } from './config/app-config';
import { CoreModule } from './core.module';
import { ErrorEnvelopeFilter } from './common/errors/error.filter';
import { HttpDrain } from './common/http/http-drain';
import { AgentsModule } from './modules/agents/agents.module';
import { AuthModule } from './modules/auth/auth.module';
import { ConformanceModule } from './modules/conformance/conformance.module';
import { ContactsModule } from './modules/contacts/contacts.module';
import { GatewayModule } from './modules/gateway/gateway.module';
import { MarketplaceModule } from './modules/marketplace/marketplace.module';
import { MessagesModule } from './modules/messages/messages.module';
import { PackagesModule } from './modules/packages/packages.module';
import { PrivacyModule } from './modules/privacy/privacy.module';
import { ProvidersModule } from './modules/providers/providers.module';
import { RuntimeBridgeModule } from './modules/runtime-bridge/runtime-bridge.module';
import { SurfacesModule } from './modules/surfaces/surfaces.module';
import { HealthModule } from './modules/health/health.module';
import { SoulModule } from './modules/soul/soul.module';
import { SystemModule } from './modules/system/system.module';
import { WebhooksModule } from './modules/webhooks/webhooks.module';
import { WorkerModule } from './worker.module';

/** Area modules that serve HTTP. Add new areas here. */
const API_AREAS = [
  HealthModule,
  SystemModule,
  AuthModule,
  SoulModule,
  ContactsModule,
  MessagesModule,
  AgentsModule,
  PrivacyModule,
  ProvidersModule,
  ConformanceModule,
  PackagesModule,
  MarketplaceModule,
  RuntimeBridgeModule,
  SurfacesModule,
  WebhooksModule,
  GatewayModule,
];

export interface AppModuleOptions {
  /** Also run the worker role in this process (`APP_ROLE=all`). */
  withWorker?: boolean;
  /** Extra modules, for tests. */
  imports?: ModuleMetadata['imports'];
}

/** The api role: HTTP controllers of every area, on top of the shared core. */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig, options: AppModuleOptions = {}): DynamicModule {
    return {
      module: AppModule,
      imports: [
        CoreModule.forRoot(config),
        ...API_AREAS,
        ...(options.withWorker ? [WorkerModule.forRoot(config, { embedded: true })] : []),
        ...(options.imports ?? []),
      ],
      providers: [{ provide: APP_FILTER, useClass: ErrorEnvelopeFilter }, HttpDrain],
    };
  }
}
