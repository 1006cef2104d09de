/**
 * The component contracts live with the descriptors, in a plain contract file
 * the server imports too (conformance checks the examples against them):
 * src/modules/descriptors/component-contracts.contract.ts. Re-exported here so
 * the pages keep importing them from web/app.
 */
export * from '../../src/modules/descriptors/component-contracts.contract';
