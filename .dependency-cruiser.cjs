/**
 * Module boundaries of the service, checked by `npm run lint:deps` (part of `npm run lint`).
 * The layout and the reasons are in README.md ("Project layout") and CONVENTIONS.md ("Architecture").
 * Each rule names the files at both ends of a violation, so a report says which import to undo.
 * Raw SQL outside `*.repository.ts` is checked by `npm run lint:sql` (scripts/check-sql-placement.js); this file is about imports.
 */
/**
 * The src/ files web/ may import: plain contracts of the public API. A file named `*.contract.ts` is one by its name;
 * the others are listed because web/console/types.ts already re-exports them (scopes, risk tiers, webhook event types).
 */
const CONTRACTS = [
  '\\.contract\\.ts$',
  '^src/modules/webhooks/webhook-contract\\.ts$',
  '^src/modules/providers/scopes\\.ts$',
  '^packages/rules/src/descriptors/(capability-descriptor|component-contracts)\\.ts$',
].join('|');

/** @type {import('dependency-cruiser').IConfiguration} */
const config = {
  forbidden: [
    {
      name: 'no-area-cycles',
      severity: 'error',
      comment:
        'Areas (src/modules/<area>) must not depend on each other in a circle: events between areas go through the outbox, ' +
        'shared rules go to a leaf module that both import. Checked on folders, so a cycle is found even when no single file is in one.',
      scope: 'folder',
      from: { path: '^src/modules/[^/]+$' },
      to: { path: '^src/modules/[^/]+$', circular: true },
    },
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'No file in src/ may reach itself through its imports (Nest would need forwardRef, and load order becomes fragile).',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'infra-not-to-modules',
      severity: 'error',
      comment: 'src/infra holds database, queue, redis, mail and metrics plumbing with no domain: it never imports an area.',
      from: { path: '^src/infra/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'common-not-to-modules',
      severity: 'error',
      comment: 'src/common is cross-cutting code with no domain (errors, ids, crypto, http, pagination): it never imports an area.',
      from: { path: '^src/common/' },
      to: { path: '^src/modules/' },
    },
    {
      name: 'processors-only-in-worker-lists',
      severity: 'error',
      comment:
        'A BullMQ processor is registered by the worker role alone, from the `<area>.worker.ts` lists that worker.module.ts reads; ' +
        'imported anywhere else (an area module, a service) it could end up in the api role and consume jobs there.',
      from: { path: '^src/', pathNot: '\\.worker\\.ts$' },
      to: { path: '\\.processor\\.ts$' },
    },
    {
      name: 'web-only-to-contracts',
      severity: 'error',
      comment:
        'The browser pages (web/) are bundled by esbuild for the browser: from src/ and packages/ they may import only plain contract files ' +
        '(constants and types of the public API with no Nest, TypeORM or Node runtime behind them; CONTRACTS in .dependency-cruiser.cjs) ' +
        'and the API client workspace.',
      from: { path: '^web/' },
      // The API client workspace is written for browsers and Node alike (fetch only): the console and the CLI share it.
      to: { path: '^(src|packages)/', pathNot: `${CONTRACTS}|^packages/api-client/src/` },
    },
    {
      name: 'contracts-stay-plain',
      severity: 'error',
      comment:
        'A contract file shared with the browser imports nothing but other contract files: no framework, no npm package, no Node builtin, ' +
        'so the web bundle and its typecheck never pull the server in.',
      from: { path: CONTRACTS },
      to: { pathNot: CONTRACTS },
    },
    {
      name: 'packages-stand-alone',
      severity: 'error',
      comment:
        'The toolkit workspaces (packages/*) are published on their own: they import their own files, their npm dependencies and ' +
        'each other (by package name), never the service (src/), the pages (web/) or the tests.',
      from: { path: '^packages/([^/]+)/src/' },
      to: { path: '^(src|web|test|bench)/' },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: 'An import that resolves to nothing is a typo or a missing dependency.',
      from: { path: '^(src|web|packages)/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(dist|node_modules|coverage|reports)/' },
    // Type-only imports create no runtime edge, but an area cycle through types is still a cycle of knowledge: keep them.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};

module.exports = config;

/**
 * `npm run lint:deps` runs this file (`npx depcruise src web` reads the same configuration). It goes through
 * dependency-cruiser's API rather than its CLI to say more: for a cycle between areas it also lists the imports
 * that close it, file by file, since a folder cycle alone does not say which import to undo.
 */
async function lint() {
  const { cruise } = await import('dependency-cruiser');
  const { default: extractTSConfig } = await import('dependency-cruiser/config-utl/extract-ts-config');
  const { options, forbidden } = config;
  const result = await cruise(
    ['src', 'web', 'packages'],
    { ...options, validate: true, ruleSet: { forbidden }, outputType: 'json' },
    undefined,
    {
      tsConfig: extractTSConfig(options.tsConfig.fileName),
    },
  );
  const { modules, summary } = JSON.parse(result.output);
  const importsBetween = (fromArea, toArea) =>
    modules
      .filter((m) => m.source.startsWith(`${fromArea}/`))
      .flatMap((m) => m.dependencies.filter((d) => d.resolved.startsWith(`${toArea}/`)).map((d) => `${m.source} → ${d.resolved}`));
  const lines = [];
  const seenCycles = new Set();
  for (const v of summary.violations) {
    if (v.rule.name === 'no-area-cycles') {
      const areas = [v.from, ...v.cycle.map((c) => c.name)];
      const key = [...new Set(areas)].sort().join(' ');
      if (seenCycles.has(key)) continue; // the same circle, reported once per area on it
      seenCycles.add(key);
      lines.push(`  ${v.rule.severity} ${v.rule.name}: ${areas.join(' → ')}`);
      for (let i = 0; i + 1 < areas.length; i++) for (const edge of importsBetween(areas[i], areas[i + 1])) lines.push(`      ${edge}`);
    } else if (v.cycle?.length) {
      lines.push(`  ${v.rule.severity} ${v.rule.name}: ${[v.from, ...v.cycle.map((c) => c.name)].join(' → ')}`);
    } else {
      lines.push(`  ${v.rule.severity} ${v.rule.name}: ${v.from} → ${v.to}`);
    }
  }
  const errors = summary.violations.filter((v) => v.rule.severity === 'error').length;
  process.stdout.write(
    lines.length === 0
      ? `✔ no module boundary violations (${summary.totalCruised} modules, ${summary.totalDependenciesCruised} dependencies cruised)\n`
      : `${lines.join('\n')}\n\n✘ ${lines.filter((l) => /^ {2}\S/.test(l)).length} boundary violations (see .dependency-cruiser.cjs for each rule's reason)\n`,
  );
  process.exitCode = errors > 0 ? 1 : 0;
}

if (require.main === module) {
  lint().catch((error) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 2;
  });
}
