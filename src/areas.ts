import { AgentsModule } from './modules/agents/agents.module';
import { AuthModule } from './modules/auth/auth.module';
import { ConformanceModule } from './modules/conformance/conformance.module';
import { ContactsModule } from './modules/contacts/contacts.module';
import { DeveloperDocsModule } from './modules/developer-docs/developer-docs.module';
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
import { WebhookSecretSourceModule } from './modules/webhooks/webhook-secret-source.module';
import { WebhooksModule } from './modules/webhooks/webhooks.module';

/**
 * Areas both roles load. The api serves their HTTP routes; the worker needs their services behind its
 * processors and subscribers (worker.module.ts; their controllers are inert there, as the worker has no HTTP).
 * Every area holding a user's personal data must be here, because exports are built by the worker from the
 * `@PersonalDataSection()` providers it can see. One list for both roles, so an area cannot be served by the
 * api yet be missing from the worker's exports.
 *
 * Providers and Packages are here although they have no processor of their own: the worker loads them anyway,
 * because Webhooks, RuntimeBridge, Conformance, Marketplace and System import them (apps and their tokens,
 * packages and the version lifecycle). Listing them says what the worker really holds. Leaf modules with no
 * routes of their own (AccessModule: tokens, sessions and the user guard) come with the areas that import them.
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
  // Binds conformance's webhook-secret port to the webhook profiles (see the module for why it is global).
  WebhookSecretSourceModule,
  ProvidersModule,
  PackagesModule,
];

/**
 * Areas only the api role loads: surfaces (component models served per request) and the socket gateway's
 * delivering side. The gateway's publishing side (its `gateway.worker.ts` subscribers) runs in the worker
 * without GatewayModule: it needs only the Redis bus and ContactsService, both loaded there already.
 */
export const API_ONLY_AREAS = [SurfacesModule, GatewayModule, DeveloperDocsModule];
