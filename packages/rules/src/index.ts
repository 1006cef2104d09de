/**
 * @soul-service/rules: the package descriptor rules and the conformance checks
 * that need no network, one copy for the service and the CLI, so both give the
 * same verdict for the same descriptor; every verdict names RULES_VERSION.
 */
export * from './rules-version';
export * from './json';
export * from './descriptor-error';
export * from './descriptors/capability-descriptor';
export * from './descriptors/component-contracts';
export * from './descriptors/descriptor-contract';
export * from './descriptors/descriptor-normalizer';
export * from './descriptors/field-suggestion';
export * from './descriptors/schema-checker';
export * from './descriptors/widget-params';
export * from './conformance/conformance-report';
export * from './conformance/component-checks';
export * from './conformance/credential-scan';
export * from './conformance/deferred-contracts';
export * from './conformance/runtime-answers';
export * from './conformance/runtime-exchange';
export * from './conformance/sample-values';
export * from './conformance/static-checks';
export * from './conformance/static-verdict';
export * from './conformance/ports';
export * from './conformance/runtime-client';
export * from './conformance/test-traffic';
export * from './conformance/live-checks';
export * from './conformance/conformance-run';
export * from './ids';
