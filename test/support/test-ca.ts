import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Where `make-test-ca.js` keeps the local CA and its certificates (gitignored `tmp/`). */
export const TEST_CA_DIR = resolve(__dirname, '../../tmp/test-ca');
export const TEST_CA_FILE = join(TEST_CA_DIR, 'ca.pem');

export interface TlsMaterial {
  key: string;
  cert: string;
}

/**
 * Makes sure the CA and certificates exist (generating them with openssl when
 * missing or about to expire) and reads one key pair. The generation itself lives
 * in `make-test-ca.js`, a plain script, because it has to run before Jest starts:
 * Node reads `NODE_EXTRA_CA_CERTS` only at process start.
 */
export function testCertificate(kind: 'trusted' | 'untrusted'): TlsMaterial {
  execFileSync(process.execPath, [join(__dirname, 'make-test-ca.js')], { stdio: ['ignore', 'ignore', 'inherit'] });
  const base = kind === 'trusted' ? 'server' : 'untrusted';
  return {
    key: readFileSync(join(TEST_CA_DIR, `${base}-key.pem`), 'utf8'),
    cert: readFileSync(join(TEST_CA_DIR, `${base}.pem`), 'utf8'),
  };
}

/**
 * True when this process was started trusting the test CA: `NODE_EXTRA_CA_CERTS`
 * names ca.pem itself or a bundle that contains it (the variable takes one file).
 */
export function testCaTrusted(): boolean {
  const configured = process.env.NODE_EXTRA_CA_CERTS;
  if (!configured || !existsSync(TEST_CA_FILE)) return false;
  if (resolve(configured) === TEST_CA_FILE) return true;
  try {
    return readFileSync(configured, 'utf8').includes(readFileSync(TEST_CA_FILE, 'utf8').trim());
  } catch {
    return false;
  }
}

/**
 * Fails fast, with the command to use, when a test that needs the runtime's
 * certificate to be trusted runs in a process that was not started with the CA.
 */
export function assertTestCaTrusted(): void {
  if (!testCaTrusted()) {
    throw new Error(
      `this test needs the local test CA trusted at process start: run\n` +
        `  node test/support/make-test-ca.js && NODE_EXTRA_CA_CERTS=$PWD/tmp/test-ca/ca.pem npx jest ...\n` +
        `(NODE_EXTRA_CA_CERTS is ${process.env.NODE_EXTRA_CA_CERTS ?? 'unset'})`,
    );
  }
}
