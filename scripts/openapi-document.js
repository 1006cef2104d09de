#!/usr/bin/env node
/**
 * Writes the service's OpenAPI document without a database or Redis: Nest's preview mode builds the module graph
 * without instantiating providers, which is all @nestjs/swagger reads. Used by `npm run lint` (Spectral).
 * TypeScript is compiled on the fly with the compiler itself, so decorator metadata matches `nest build`.
 * Usage: node scripts/openapi-document.js [out-file]  (default tmp/openapi.json)
 */
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- plain node script */
const fs = require('node:fs');
const path = require('node:path');
const ts = require('typescript');

const root = path.join(__dirname, '..');
const { config } = ts.readConfigFile(path.join(root, 'tsconfig.json'), ts.sys.readFile);
const { options } = ts.convertCompilerOptionsFromJson(config.compilerOptions, root);
// The toolkit workspaces are read from their sources, as tsconfig.json's `paths` say: this runs in `npm run lint`,
// before `npm run build` has compiled them into packages/*/dist.
const Module = require('node:module');
const resolveFilename = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const workspace = /^@soul-service\/([^/]+)(\/testing)?$/.exec(request);
  if (workspace) request = path.join(root, 'packages', workspace[1], 'src', workspace[2] ? 'testing.ts' : 'index.ts');
  return resolveFilename.call(this, request, ...rest);
};
require.extensions['.ts'] = (module, filename) => {
  const source = fs.readFileSync(filename, 'utf8');
  const { outputText } = ts.transpileModule(source, { compilerOptions: { ...options, sourceMap: false }, fileName: filename });
  module._compile(outputText, filename);
};

async function main() {
  require('reflect-metadata');
  const { NestFactory } = require('@nestjs/core');
  const { FastifyAdapter } = require('@nestjs/platform-fastify');
  const { AppModule } = require('../src/app.module');
  const { loadConfig } = require('../src/config/app-config');
  const { buildOpenApiDocument } = require('../src/common/openapi/document');

  const appConfig = loadConfig({ NODE_ENV: 'test', APP_ROLE: 'api', LOG_LEVEL: 'silent' });
  const app = await NestFactory.create(AppModule.forRoot(appConfig), new FastifyAdapter(), {
    preview: true,
    logger: false,
    abortOnError: false,
  });
  const document = buildOpenApiDocument(app);
  const out = path.resolve(root, process.argv[2] ?? 'tmp/openapi.json');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, JSON.stringify(document, null, 2) + '\n');
  console.log(`wrote ${path.relative(root, out)}: ${Object.keys(document.paths).length} paths`);
  await app.close();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
