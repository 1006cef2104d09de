/**
 * The component contracts live with the descriptor rules, in a plain contract file
 * the rules import too (conformance checks the examples against them):
 * packages/rules/src/descriptors/component-contracts.ts. Imported by its path, not
 * as @soul-service/rules, so the bundle takes this file alone and not the rules'
 * ajv; re-exported here so the pages keep importing them from web/app.
 */
export * from '../../packages/rules/src/descriptors/component-contracts';
