import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { runInNewContext } from 'node:vm';
import { signatureHeaders } from '../../src/modules/webhooks/webhook-signature';
import { fencedBlocks } from '../support/doc-shell';

/**
 * The verification snippets of docs/webhook-signatures.md, run as a reader would paste them, against headers made by
 * the service's own signer (the one the delivery worker uses), so the page fails this test when either side changes.
 */
const PAGE = join(__dirname, '../../docs/webhook-signatures.md');
const blocks = fencedBlocks(PAGE);
const [nodeSnippet] = blocks.filter((b) => b.lang === 'js');
const [pythonSnippet] = blocks.filter((b) => b.lang === 'python');

const current = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const previous = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';
const body = JSON.stringify({ id: 'evt_1', type: 'install.created', data: { install_id: 'inst_1', note: 'naïve – ünïcode' } });
const now = () => Math.floor(Date.now() / 1000);

/** Header names as a Node server sees them: lower case. */
const lower = (headers: Record<string, string>) => Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));

interface Case {
  name: string;
  secret: string;
  body: string;
  headers: Record<string, string>;
  service: boolean;
  standard: boolean;
}

function cases(): Case[] {
  const signed = lower(signatureHeaders({ current, previous: null }, 'evt_1', now(), body));
  const rotating = lower(signatureHeaders({ current, previous }, 'evt_1', now(), body));
  const stale = lower(signatureHeaders({ current, previous: null }, 'evt_1', now() - 3600, body));
  return [
    { name: 'a fresh delivery', secret: current, body, headers: signed, service: true, standard: true },
    { name: 'a changed body', secret: current, body: body.replace('inst_1', 'inst_2'), headers: signed, service: false, standard: false },
    { name: 'another secret', secret: previous, body, headers: signed, service: false, standard: false },
    { name: 'the new secret during a rotation', secret: current, body, headers: rotating, service: true, standard: true },
    { name: 'the previous secret during a rotation', secret: previous, body, headers: rotating, service: true, standard: true },
    { name: 'an hour-old timestamp (a replay)', secret: current, body, headers: stale, service: true, standard: false },
    { name: 'no signature headers', secret: current, body, headers: {}, service: false, standard: false },
    {
      name: 'a truncated signature',
      secret: current,
      body,
      headers: { ...signed, 'x-service-signature': signed['x-service-signature'].slice(0, 20), 'webhook-signature': 'v1,abc' },
      service: false,
      standard: false,
    },
    {
      // As many characters as a real signature but more bytes: a length check on characters would throw.
      name: 'a non-ASCII signature of the right length',
      secret: current,
      body,
      headers: {
        ...signed,
        'x-service-signature': 'é'.repeat(signed['x-service-signature'].length),
        'webhook-signature': `v1,${'é'.repeat(signed['webhook-signature'].length - 3)}`,
      },
      service: false,
      standard: false,
    },
    {
      name: 'a v2 signature with the right bytes',
      secret: current,
      body,
      headers: { ...signed, 'webhook-signature': signed['webhook-signature'].replace('v1,', 'v2,') },
      service: true,
      standard: false,
    },
  ];
}

describe('webhook signature snippets (docs/webhook-signatures.md)', () => {
  it('has one Node and one Python verification snippet', () => {
    expect(nodeSnippet?.body).toContain('function verifyServiceSignature');
    expect(pythonSnippet?.body).toContain('def verify_standard_webhook');
  });

  describe('Node', () => {
    const exports: Record<string, (...args: unknown[]) => boolean> = {};
    beforeAll(() => {
      const sandbox = { require, Buffer, exports };
      runInNewContext(
        `${nodeSnippet.body}\nexports.verifyServiceSignature = verifyServiceSignature; exports.verifyStandardWebhook = verifyStandardWebhook;`,
        sandbox,
      );
    });

    it.each(cases().map((c) => [c.name, c] as const))('%s', (_name, c) => {
      // Raw bytes, as express.raw() gives them.
      expect(exports.verifyServiceSignature(c.secret, Buffer.from(c.body), c.headers)).toBe(c.service);
      expect(exports.verifyStandardWebhook(c.secret, Buffer.from(c.body), c.headers)).toBe(c.standard);
    });
  });

  describe('Python', () => {
    // python3 is a test prerequisite (README; .ci/run installs it): a machine without it fails here, saying so,
    // rather than passing without having run the page's Python snippet.
    it('runs on a machine with python3', () => {
      expect({ python3: spawnSync('python3', ['--version']).status === 0 }).toEqual({ python3: true });
    });

    it('gives the same answers as the service for every case', () => {
      const all = cases();
      const harness = `
import json, sys
cases = json.load(sys.stdin)
print(json.dumps([[verify_service_signature(c["secret"], c["body"].encode(), c["headers"]),
                   verify_standard_webhook(c["secret"], c["body"].encode(), c["headers"])] for c in cases]))
`;
      const run = spawnSync('python3', ['-c', `${pythonSnippet.body}\n${harness}`], { input: JSON.stringify(all), encoding: 'utf8' });
      expect(run.stderr).toBe('');
      const answers = JSON.parse(run.stdout) as boolean[][];
      expect(answers.map((a, i) => ({ case: all[i].name, answers: a }))).toEqual(
        all.map((c) => ({ case: c.name, answers: [c.service, c.standard] })),
      );
    });
  });
});
