import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
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
 * A key pair for `hostNames`, signed by the test CA: for a local server called
 * by a host name that a scripted resolver maps to 127.0.0.1, so TLS verifies
 * that name as it would in production. Made fresh (valid two days) each time.
 */
export function certificateForHosts(hostNames: string[]): TlsMaterial {
  testCertificate('trusted'); // the CA itself
  const dir = mkdtempSync(join(tmpdir(), 'test-host-cert-'));
  const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  try {
    const key = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'key.pem'];
    openssl(['req', '-new', ...key, '-out', 'host.csr', '-subj', `/CN=${hostNames[0]}`]);
    writeFileSync(
      join(dir, 'host.ext'),
      [
        `subjectAltName=${hostNames.map((name) => `DNS:${name}`).join(',')}`,
        'basicConstraints=CA:FALSE',
        'keyUsage=critical,digitalSignature',
        'extendedKeyUsage=serverAuth',
        '',
      ].join('\n'),
    );
    const ca = ['-CA', TEST_CA_FILE, '-CAkey', join(TEST_CA_DIR, 'ca-key.pem'), '-set_serial', `0x${randomBytes(16).toString('hex')}`];
    openssl(['x509', '-req', '-in', 'host.csr', ...ca, '-days', '2', '-extfile', 'host.ext', '-out', 'cert.pem']);
    return { key: readFileSync(join(dir, 'key.pem'), 'utf8'), cert: readFileSync(join(dir, 'cert.pem'), 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
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
