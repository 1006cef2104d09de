import { execFileSync } from 'node:child_process';
import {
  callCommands,
  capabilitiesForCalls,
  lifecycleSteps,
  listingHref,
  type RunState,
  type VersionState,
} from '../../web/console/guide-model';

function version(state: string): VersionState {
  return { version: '1.0.0', state };
}

function run(full: boolean, status: string, passed: boolean, score = passed ? 100 : 40): RunState {
  return { full, status, passed, score, error: null };
}

const states = (v: VersionState, runs: RunState[]) => lifecycleSteps(v, runs).map((s) => `${s.label}: ${s.state}`);

describe('console guide: the lifecycle checklist', () => {
  it('points at the quick validation first, then the full run, then submission', () => {
    expect(states(version('draft'), [])).toEqual([
      'Create the version: done',
      'Validate (quick): current',
      'Validate fully (conformance): todo',
      'Submit for review: todo',
      'Review: todo',
      'Publish to the catalog: todo',
    ]);
    expect(states(version('draft'), [run(false, 'completed', true)]).slice(1, 4)).toEqual([
      'Validate (quick): done',
      'Validate fully (conformance): current',
      'Submit for review: todo',
    ]);
    // Newest first: the latest full run decides, and a passed one covers the quick validation.
    expect(states(version('draft'), [run(true, 'completed', true), run(false, 'completed', false)]).slice(1, 4)).toEqual([
      'Validate (quick): done',
      'Validate fully (conformance): done',
      'Submit for review: current',
    ]);
  });

  it('shows a failed or running step as the current one, not as done', () => {
    expect(states(version('draft'), [run(false, 'completed', false)])[1]).toBe('Validate (quick): failed');
    expect(states(version('draft'), [run(true, 'running', false), run(false, 'completed', true)])[2]).toBe(
      'Validate fully (conformance): running',
    );
    expect(states(version('draft'), [run(true, 'failed', false), run(false, 'completed', true)])[2]).toBe(
      'Validate fully (conformance): failed',
    );
  });

  it('follows the version through review and publication', () => {
    expect(states(version('in_review'), []).slice(1)).toEqual([
      'Validate (quick): done',
      'Validate fully (conformance): done',
      'Submit for review: done',
      'Review: waiting',
      'Publish to the catalog: todo',
    ]);
    expect(states(version('approved'), [])[5]).toBe('Publish to the catalog: current');
    expect(states(version('published'), []).every((s) => s.endsWith(': done'))).toBe(true);
  });
});

describe('console guide: the "call it" commands', () => {
  it('takes the first example of each executable capability, params or input by mode, and leaves webhooks out', () => {
    expect(
      capabilitiesForCalls([
        { name: 'balance', type: 'state', examples: [{ params: { account: 'checking' } }] },
        { name: 'transfer', type: 'action', examples: [{ input: { amount: 1 } }] },
        { name: 'hooks', type: 'webhook' },
        { name: 'feed', type: 'history', examples: ['not an object'] },
      ]),
    ).toEqual([
      { name: 'balance', type: 'state', params: { account: 'checking' } },
      { name: 'transfer', type: 'action', params: { amount: 1 } },
      { name: 'feed', type: 'history', params: {} },
    ]);
  });

  it('quotes every value for the shell: hostile example params reach curl as written', () => {
    const hostile = { note: `it's $(touch /tmp/pwned) \`id\` "quoted" \\ back`, nested: { list: ["'", '$HOME'] } };
    const { token, execute } = callCommands({
      origin: 'http://127.0.0.1:3000',
      clientId: "cid_o'brien",
      packageId: 'pkg_1',
      capability: { name: 'balance', type: 'state', params: hostile },
    });
    // A stand-in curl prints its arguments NUL-separated, so the shell's own parsing is what is checked.
    const args = (command: string) =>
      execFileSync('bash', ['-c', `curl() { printf '%s\\0' "$@"; }; jq() { cat; }; APP_TOKEN=t\n${command}\nprintf '%s\\0' "$CLIENT_ID"`], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'ignore'],
      })
        .split('\0')
        .filter(Boolean);
    const executed = args(execute);
    expect(executed).toContain('http://127.0.0.1:3000/v1/providers/packages/pkg_1/capabilities/balance/execute');
    const body = JSON.parse(executed[executed.indexOf('-d') + 1]) as { params: unknown; installId: string };
    expect(body.params).toEqual(hostile);
    expect(body.installId).toMatch(/^<install id/);
    expect(args(token).pop()).toBe("cid_o'brien");
  });

  it('links the listing in the app, the slug encoded', () => {
    expect(listingHref('acme-bank')).toBe('/app/marketplace/acme-bank');
    expect(listingHref('a/../b')).toBe('/app/marketplace/a%2F..%2Fb');
  });
});
