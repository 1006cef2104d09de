#!/usr/bin/env node
/**
 * Creates the local test CA and its certificates in tmp/test-ca/ with the openssl CLI,
 * reusing them while they stay valid for at least another day:
 *
 *   ca.pem, ca-key.pem          the test CA (what NODE_EXTRA_CA_CERTS points at)
 *   server.pem, server-key.pem  signed by the CA for 127.0.0.1, ::1 and localhost
 *   untrusted.pem, untrusted-key.pem  self-signed for the same names, trusted by nobody
 *
 * Plain JavaScript so it runs before Jest (Node reads NODE_EXTRA_CA_CERTS only at
 * process start):  node test/support/make-test-ca.js && NODE_EXTRA_CA_CERTS=tmp/test-ca/ca.pem jest
 * Files are generated in a private directory and moved into place with one rename,
 * so concurrent runs never see a half-written set.
 */
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- a CommonJS script run by plain node before Jest */
const { execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } = require('node:fs');
const { join, resolve } = require('node:path');

const ROOT = resolve(__dirname, '../..');
const DIR = join(ROOT, 'tmp', 'test-ca');
const FILES = ['ca.pem', 'ca-key.pem', 'server.pem', 'server-key.pem', 'untrusted.pem', 'untrusted-key.pem'];
const NAMES = 'subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost';
const EC_KEY = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];

function openssl(args, cwd) {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

/** True when every file exists and both server certificates stay valid for another day. */
function usable(dir) {
  if (!FILES.every((f) => existsSync(join(dir, f)))) return false;
  try {
    for (const cert of ['ca.pem', 'server.pem', 'untrusted.pem']) openssl(['x509', '-checkend', '86400', '-noout', '-in', cert], dir);
    return true;
  } catch {
    return false;
  }
}

function generate(dir) {
  mkdirSync(dir, { recursive: true });
  openssl(
    [
      'req',
      '-x509',
      ...EC_KEY,
      '-keyout',
      'ca-key.pem',
      '-out',
      'ca.pem',
      '-days',
      '3650',
      '-subj',
      '/CN=Service Test CA (local, tests only)',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ],
    dir,
  );
  openssl(['req', '-new', ...EC_KEY, '-keyout', 'server-key.pem', '-out', 'server.csr', '-subj', '/CN=localhost'], dir);
  writeFileSync(
    join(dir, 'server.ext'),
    [NAMES, 'basicConstraints=CA:FALSE', 'keyUsage=critical,digitalSignature', 'extendedKeyUsage=serverAuth', ''].join('\n'),
  );
  const serial = `0x${randomBytes(16).toString('hex')}`;
  openssl(
    [
      'x509',
      '-req',
      '-in',
      'server.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca-key.pem',
      '-set_serial',
      serial,
      '-days',
      '825',
      '-extfile',
      'server.ext',
      '-out',
      'server.pem',
    ],
    dir,
  );
  openssl(
    [
      'req',
      '-x509',
      ...EC_KEY,
      '-keyout',
      'untrusted-key.pem',
      '-out',
      'untrusted.pem',
      '-days',
      '825',
      '-subj',
      '/CN=localhost',
      '-addext',
      NAMES,
    ],
    dir,
  );
  rmSync(join(dir, 'server.csr'));
  rmSync(join(dir, 'server.ext'));
}

function ensureTestCa() {
  if (usable(DIR)) return DIR;
  const staging = `${DIR}.${process.pid}.${Date.now()}`;
  generate(staging);
  if (usable(DIR)) {
    // Another run finished first; keep its files (a running test may already trust them).
    rmSync(staging, { recursive: true, force: true });
    return DIR;
  }
  rmSync(DIR, { recursive: true, force: true });
  try {
    renameSync(staging, DIR);
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    if (!usable(DIR)) throw error;
  }
  return DIR;
}

if (require.main === module) {
  try {
    ensureTestCa();
  } catch (error) {
    console.error(`make-test-ca: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  }
}

module.exports = { ensureTestCa, TEST_CA_DIR: DIR };
