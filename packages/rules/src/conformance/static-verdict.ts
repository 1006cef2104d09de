import { RULES_VERSION } from '../rules-version';
import { CapabilityDescriptor } from '../descriptors/capability-descriptor';
import {
  ConformanceReport,
  DIMENSION_MAX,
  DimensionKey,
  DimensionReport,
  DIMENSIONS,
  finishReport,
  notRun,
  scoreDimension,
} from './conformance-report';
import { deferredLiveContracts } from './deferred-contracts';
import { documentationChecks, schemaChecks, staticContractChecks } from './static-checks';

export interface StaticVerdictInput {
  /** The package's risk tier (`data_only`, `action_capable`, …); an unknown one fails `contracts.risk_tier`. */
  riskTier: string;
  /** Descriptors in their stored form (`normaliseCapabilities`). */
  capabilities: CapabilityDescriptor[];
}

/** A verdict and the rules that gave it; `rulesVersion` is spelled as the service's answers carry it (camelCase, as every provider platform field). */
export type Verdict = ConformanceReport & { rulesVersion: string };

/**
 * The dimensions of a validation without a live runtime (`validate` without
 * `full`): schema, the static half of contracts (the live half deferred, so
 * each check keeps the maximum it has in a full run) and documentation; the
 * three live dimensions are reported as not run. The service and the CLI both
 * compute a quick validation with this function.
 */
export function staticVerdict(input: StaticVerdictInput): Verdict {
  const { capabilities } = input;
  const dimensions = Object.fromEntries(DIMENSIONS.map((k) => [k, notRun(k)])) as Record<DimensionKey, DimensionReport>;
  dimensions.schema = scoreDimension(DIMENSION_MAX.schema, schemaChecks(capabilities));
  dimensions.documentation = scoreDimension(DIMENSION_MAX.documentation, documentationChecks(capabilities));
  dimensions.contracts = scoreDimension(DIMENSION_MAX.contracts, [
    ...staticContractChecks(input.riskTier, capabilities),
    ...deferredLiveContracts(capabilities),
  ]);
  return { ...finishReport(false, dimensions), rulesVersion: RULES_VERSION };
}
