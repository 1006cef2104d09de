import { AgentsModule } from './modules/agents/agents.module';
import { AuthModule } from './modules/auth/auth.module';
import { ConformanceModule } from './modules/conformance/conformance.module';
import { ContactsModule } from './modules/contacts/contacts.module';
import { GatewayModule } from './modules/gateway/gateway.module';
import { HealthModule } from './modules/health/health.module';
import { MarketplaceModule } from './modules/marketplace/marketplace.module';
import { MessagesModule } from './modules/messages/messages.module';
import { PackagesModule } from './modules/packages/packages.module';
import { PrivacyModule } from './modules/privacy/privacy.module';
import { ProvidersModule } from './modules/providers/providers.module';
import { RuntimeBridgeModule } from './modules/runtime-bridge/runtime-bridge.module';
import { SoulModule } from './modules/soul/soul.module';
import { SurfacesModule } from './modules/surfaces/surfaces.module';
import { SystemModule } from './modules/system/system.module';
import { WebhooksModule } from './modules/webhooks/webhooks.module';

/**
 * Areas both roles load: their services back the worker's processors and
 * subscribers, and every area holding a user's personal data must be here,
 * because exports are built by the worker from the `@PersonalDataSection()`
 * providers it can see. One list for both roles, so an area cannot be served
 * by the api yet be missing from the worker's exports.
 */
export const SHARED_AREAS = [
  HealthModule,
  SystemModule,
  AuthModule,
  SoulModule,
  ContactsModule,
  MessagesModule,
  AgentsModule,
  PrivacyModule,
  ConformanceModule,
  MarketplaceModule,
  RuntimeBridgeModule,
  WebhooksModule,
];

/** Areas only the api role needs: platform account and package management, surfaces and the socket gateway. */
export const API_ONLY_AREAS = [ProvidersModule, PackagesModule, SurfacesModule, GatewayModule];
