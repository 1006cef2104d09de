import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { Test } from 'supertest';
import { contractFor } from './openapi-contract';

/**
 * Validates every supertest response of an e2e file against the OpenAPI document of the server that answered
 * (test/support/openapi-contract.ts): a status, header or body the document does not describe fails the request,
 * naming the operation, the status and the schema path.
 *
 * On for every e2e file. `OPENAPI_CONTRACT=report` prints what a file breaks without failing it (with
 * `OPENAPI_CONTRACT_REPORT_DIR`, also one file per test file, with a sample body of each undocumented answer);
 * `OPENAPI_CONTRACT=off` checks nothing.
 */
type Mode = 'strict' | 'report' | 'off';
const CHECKED_PATH = /^\/(v1\/|health\/|\.well-known\/|metrics$)/;
/** Routes that exist only in tests (test/support/probe.module.ts) and describe nothing a client can call. */
const TEST_ONLY_PATH = /^\/v1\/(providers\/)?probe\//;

function modeFor(): Mode {
  const requested = process.env.OPENAPI_CONTRACT;
  return requested === 'report' || requested === 'off' ? requested : 'strict';
}

const mode = modeFor();
const reported = new Set<string>();
/** One body per undocumented operation and status, to write its schema from (report mode). */
const samples: Record<string, unknown> = {};

interface PatchedTest {
  url: string;
  method: string;
  assert(resError: unknown, res: unknown, fn?: (err: unknown, res: unknown) => void): void;
}

if (mode !== 'off') {
  const prototype = Test.prototype as unknown as PatchedTest;
  const original = prototype.assert;
  prototype.assert = function (this: PatchedTest, resError, res, fn) {
    const url = new URL(this.url);
    if (!res || !fn || !CHECKED_PATH.test(url.pathname) || TEST_ONLY_PATH.test(url.pathname)) return original.call(this, resError, res, fn);
    const response = res as { status: number; headers: Record<string, string>; text?: string; body?: unknown };
    const method = this.method;
    original.call(this, resError, res, (error: unknown, result: unknown) => {
      if (error) return fn(error, result);
      contractFor(url.origin)
        .then((contract) => contract.check(method, url.pathname, response))
        .then(
          (problems) => {
            if (problems.length === 0) return fn(null, result);
            if (mode === 'report') {
              for (const problem of problems) reported.add(problem);
              if (problems.some((p) => p.includes('where the document describes none'))) {
                samples[`${method} ${url.pathname} ${response.status}`] ??= response.body ?? response.text;
              }
              return fn(null, result);
            }
            fn(new Error(`response does not match the OpenAPI document:\n  ${problems.join('\n  ')}`), result);
          },
          (failure: unknown) => fn(failure, result),
        );
    });
  };

  afterAll(() => {
    if (reported.size === 0) return;
    const lines = [...reported].sort();
    console.warn(`OpenAPI contract (report mode):\n  ${lines.join('\n  ')}`);
    if (process.env.OPENAPI_CONTRACT_REPORT_DIR) {
      mkdirSync(process.env.OPENAPI_CONTRACT_REPORT_DIR, { recursive: true });
      const file = join(process.env.OPENAPI_CONTRACT_REPORT_DIR, `${basename(expect.getState().testPath ?? 'unknown')}.txt`);
      writeFileSync(file, lines.join('\n') + '\n');
      writeFileSync(file.replace(/\.txt$/, '.samples.json'), JSON.stringify(samples, null, 2) + '\n');
    }
  });
}
