import { Foundation1764000000000 } from './1764000000000-Foundation';
import { UserApi1764000100000 } from './1764000100000-UserApi';
import { Providers1764000500000 } from './1764000500000-Providers';
import { Packages1764000600000 } from './1764000600000-Packages';
import { Webhooks1764000700000 } from './1764000700000-Webhooks';
import { RuntimeBridge1764000800000 } from './1764000800000-RuntimeBridge';
import { SessionCacheInvalidation1764000900000 } from './1764000900000-SessionCacheInvalidation';
import { DeveloperLoginHardening1764001000000 } from './1764001000000-DeveloperLoginHardening';
import { VersionRuntimeUrl1764001100000 } from './1764001100000-VersionRuntimeUrl';
import { VerifiedEmails1764001200000 } from './1764001200000-VerifiedEmails';
import { AppTokenBinding1764001300000 } from './1764001300000-AppTokenBinding';
import { JobOutbox1764001400000 } from './1764001400000-JobOutbox';
import { WebhookDrainIndex1764002000000 } from './1764002000000-WebhookDrainIndex';
import { ConversationIndexes1764001500000 } from './1764001500000-ConversationIndexes';
import { OptionalRuntimeUrl1764001800000 } from './1764001800000-OptionalRuntimeUrl';
import { AppTiersAndDeveloperSuspension1764001900000 } from './1764001900000-AppTiersAndDeveloperSuspension';
import { InstallUpgradesAndReauthorization1764001700000 } from './1764001700000-InstallUpgradesAndReauthorization';
import { ConfirmationStarter1764001710000 } from './1764001710000-ConfirmationStarter';
import { PasswordResets1764002130000 } from './1764002130000-PasswordResets';
import { DeliveryPackage1764002240000 } from './1764002240000-DeliveryPackage';
import { PlatformAuthInvalidation1764002300000 } from './1764002300000-PlatformAuthInvalidation';
import { InstallTargetsInvalidation1764002800000 } from './1764002800000-InstallTargetsInvalidation';
import { ConformanceRulesVersion1764002900000 } from './1764002900000-ConformanceRulesVersion';
import { SessionControl1764002400000 } from './1764002400000-SessionControl';
import { WebhookEndpoints1764002500000 } from './1764002500000-WebhookEndpoints';
import { ProviderEventsAndExecutionLog1764002600000 } from './1764002600000-ProviderEventsAndExecutionLog';
import { CapabilityMetrics1764002700000 } from './1764002700000-CapabilityMetrics';
import { JobOutboxWriterRelays1764003000000 } from './1764003000000-JobOutboxWriterRelays';
import { ClaimOrderIndexes1764003100000 } from './1764003100000-ClaimOrderIndexes';

/**
 * Every migration, in order. `npm run migration:generate -- src/infra/database/migrations/<Name>`
 * writes a new file; add its class here so the api, the worker and the CLI all run it.
 */
export const MIGRATIONS = [
  Foundation1764000000000,
  UserApi1764000100000,
  Providers1764000500000,
  Packages1764000600000,
  Webhooks1764000700000,
  RuntimeBridge1764000800000,
  SessionCacheInvalidation1764000900000,
  DeveloperLoginHardening1764001000000,
  VersionRuntimeUrl1764001100000,
  VerifiedEmails1764001200000,
  AppTokenBinding1764001300000,
  JobOutbox1764001400000,
  ConversationIndexes1764001500000,
  InstallUpgradesAndReauthorization1764001700000,
  ConfirmationStarter1764001710000,
  OptionalRuntimeUrl1764001800000,
  AppTiersAndDeveloperSuspension1764001900000,
  WebhookDrainIndex1764002000000,
  PasswordResets1764002130000,
  DeliveryPackage1764002240000,
  PlatformAuthInvalidation1764002300000,
  SessionControl1764002400000,
  WebhookEndpoints1764002500000,
  ProviderEventsAndExecutionLog1764002600000,
  CapabilityMetrics1764002700000,
  InstallTargetsInvalidation1764002800000,
  ConformanceRulesVersion1764002900000,
  JobOutboxWriterRelays1764003000000,
  ClaimOrderIndexes1764003100000,
];
