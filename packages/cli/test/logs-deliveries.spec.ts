import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '@soul-service/cli';
import { ScriptedServer, type Received } from '../../api-client/test/scripted-server';
import { DeliveryCursor, FOLLOW_PENDING_MS, LOOKBACK_MS } from '../src/commands/logs';
import { terminal } from './terminal';

type Status = 'pending' | 'delivered' | 'failed';

const delivery = (id: string, at: string, status: Status = 'delivered', attempts = 1, extra: Record<string, unknown> = {}) => ({
  id,
  endpoint_id: 'whe_primary',
  event_id: `evt_${id}`,
  event_type: 'install.created',
  idempotency_key: `idem_${id}`,
  status,
  attempt_count: attempts,
  next_attempt_at: status === 'pending' ? '2030-01-01T00:01:00.000Z' : null,
  last_status_code: attempts === 0 ? null : status === 'delivered' ? 200 : 500,
  last_error: status === 'failed' ? 'http_500' : null,
  replay_of: null,
  test: false,
  package_id: 'pkg_1',
  delivered_at: status === 'delivered' ? at : null,
  failed_at: status === 'failed' ? at : null,
  created_at: at,
  ...extra,
});
type Delivery = ReturnType<typeof delivery>;

const at = (seconds: number) => new Date(Date.parse('2030-01-01T00:00:00.000Z') + seconds * 1000).toISOString();
const lines = (stdout: string) =>
  stdout
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Delivery);

describe('soul logs tail --deliveries', () => {
  describe('DeliveryCursor', () => {
    it('shows a delivery when it appears and again at each change of its state, oldest first', () => {
      const cursor = new DeliveryCursor();
      expect(cursor.since()).toBeUndefined();
      cursor.skip([delivery('dlv_old', at(0))] as never);
      expect(cursor.since()).toBe(new Date(Date.parse(at(0)) - LOOKBACK_MS).toISOString());
      const first = cursor.take([delivery('dlv_b', at(2), 'pending', 0), delivery('dlv_a', at(1)), delivery('dlv_old', at(0))] as never);
      expect(first.map((d) => `${d.id} ${d.status}`)).toEqual(['dlv_a delivered', 'dlv_b pending']);
      // The same rows again: nothing; an attempt made, then the chain settled: one line each.
      expect(cursor.take([delivery('dlv_b', at(2), 'pending', 0), delivery('dlv_a', at(1))] as never)).toEqual([]);
      expect(cursor.take([delivery('dlv_b', at(2), 'pending', 1)] as never).map((d) => d.attempt_count)).toEqual([1]);
      expect(cursor.take([delivery('dlv_b', at(2), 'failed', 2)] as never).map((d) => d.status)).toEqual(['failed']);
    });

    it('reads back to the oldest delivery still pending, for at most FOLLOW_PENDING_MS', () => {
      const cursor = new DeliveryCursor();
      cursor.take([delivery('dlv_waiting', at(0), 'pending', 1)] as never);
      // Newer deliveries move the window on; the pending one keeps `since` at its creation.
      cursor.take([delivery('dlv_new', at(120))] as never);
      expect(cursor.since()).toBe(at(0));
      // Once settled, the window is the usual look-back behind the newest.
      cursor.take([delivery('dlv_waiting', at(0), 'delivered', 2)] as never);
      expect(cursor.since()).toBe(new Date(Date.parse(at(120)) - LOOKBACK_MS).toISOString());

      const patient = new DeliveryCursor();
      patient.take([delivery('dlv_stuck', at(0), 'pending', 2)] as never);
      patient.take([delivery('dlv_later', at(FOLLOW_PENDING_MS / 1000 + 1))] as never);
      // Past the follow window a pending delivery is no longer read again: the look-back alone remains.
      expect(patient.since()).toBe(new Date(Date.parse(at(FOLLOW_PENDING_MS / 1000 + 1)) - LOOKBACK_MS).toISOString());
    });
  });

  describe('the command', () => {
    let server: ScriptedServer;
    let configDir: string;
    const env = (extra: Record<string, string> = {}) => ({
      SOUL_BASE_URL: server.url,
      SOUL_CONFIG_DIR: configDir,
      SOUL_TOKEN: 'tok',
      CI: 'true',
      ...extra,
    });

    beforeAll(async () => {
      server = await ScriptedServer.start();
      configDir = mkdtempSync(join(tmpdir(), 'soul-deliveries-'));
    });
    afterAll(() => server.close());

    /** Answers the log from `pages`: the first read (limit 1) with the newest row, then one scripted poll after another. */
    function script(path: string, newest: Delivery[], polls: Delivery[][]) {
      let poll = 0;
      server.answer((r: Received) => {
        const url = new URL(r.path, server.url);
        if (r.method !== 'GET' || url.pathname !== path) return { status: 404, body: { detail: `no route ${r.path}` } };
        if (url.searchParams.get('limit') === '1') return { status: 200, body: { deliveries: newest, next_cursor: null } };
        const page = polls[Math.min(poll, polls.length - 1)];
        poll += 1;
        return { status: 200, body: { deliveries: page, next_cursor: null } };
      });
    }

    async function tail(argv: string[], until: (stdout: string) => boolean, extra: Record<string, string> = {}) {
      const t = terminal(env(extra));
      const done = run(['logs', 'tail', '--deliveries', '--interval', '0.2', ...argv], t.io);
      const deadline = Date.now() + 5_000;
      while (!until(t.stdout()) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
      t.abort();
      return { code: await done, t };
    }

    it('follows the app’s delivery log: new deliveries and their later outcome, not what was there already; Ctrl-C ends it', async () => {
      const before = delivery('dlv_before', at(0), 'pending', 1);
      script(
        '/v1/providers/apps/app_1/webhook/deliveries',
        [before],
        [
          // The window behind the newest at the start: there already, not shown.
          [before, delivery('dlv_older', at(-5))],
          [delivery('dlv_1', at(30), 'pending', 0), before],
          [delivery('dlv_1', at(30), 'delivered', 1), delivery('dlv_before', at(0), 'failed', 2)],
          [
            delivery('dlv_2', at(31), 'delivered', 1),
            delivery('dlv_1', at(30), 'delivered', 1),
            delivery('dlv_before', at(0), 'failed', 2),
          ],
        ],
      );
      const { code, t } = await tail(['--event-type', 'install.created', '--package', 'pkg_1'], (out) => out.includes('dlv_2'), {
        SOUL_APP_ID: 'app_1',
      });
      expect(code).toBe(0);
      expect(t.stderr()).toBe('');
      expect(lines(t.stdout()).map((d) => `${d.id} ${d.status} ${d.attempt_count}`)).toEqual([
        'dlv_1 pending 0',
        'dlv_before failed 2',
        'dlv_1 delivered 1',
        'dlv_2 delivered 1',
      ]);
      const polls = server.received.map((r) => Object.fromEntries(new URL(r.path, server.url).searchParams));
      expect(polls[0]).toEqual({ limit: '1', event_type: 'install.created', package_id: 'pkg_1' });
      // dlv_before, pending when the tail started, keeps the window open back to its creation after dlv_1 moved it on.
      expect(polls[2]).toMatchObject({ since: new Date(Date.parse(at(0)) - LOOKBACK_MS).toISOString() });
      expect(polls[3]).toMatchObject({ limit: '200', event_type: 'install.created', package_id: 'pkg_1', since: at(0) });
      expect(polls.every((q) => q.status === undefined)).toBe(true);
    });

    it('shows only deliveries reaching the asked status, from one endpoint’s log', async () => {
      script(
        '/v1/providers/apps/app_1/webhook/endpoints/whe_second/deliveries',
        [],
        [
          [delivery('dlv_1', at(1), 'pending', 1, { endpoint_id: 'whe_second' })],
          [
            delivery('dlv_2', at(2), 'delivered', 1, { endpoint_id: 'whe_second' }),
            delivery('dlv_1', at(1), 'failed', 2, { endpoint_id: 'whe_second' }),
          ],
        ],
      );
      const { code, t } = await tail(['--app', 'app_1', '--endpoint', 'whe_second', '--status', 'failed'], (out) => out.includes('dlv_1'));
      expect(code).toBe(0);
      expect(lines(t.stdout()).map((d) => `${d.id} ${d.status} ${d.endpoint_id}`)).toEqual(['dlv_1 failed whe_second']);
    });

    it('writes a line per change for a person', async () => {
      script('/v1/providers/apps/app_1/webhook/deliveries', [], [[delivery('dlv_1', at(1), 'failed', 6, { test: true })]]);
      const t = terminal({ ...env({ SOUL_APP_ID: 'app_1' }), CI: undefined }, true);
      const done = run(['logs', 'tail', '--deliveries', '--interval', '0.2'], t.io);
      const deadline = Date.now() + 5_000;
      while (!t.stdout().includes('dlv_1') && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
      t.abort();
      expect(await done).toBe(0);
      expect(t.stderr()).toContain('Following webhook deliveries of app_1');
      expect(t.stdout()).toBe(
        `${at(1)}  FAILED     install.created         6 attempts  HTTP 500  dlv_1  whe_primary  test  error http_500\n`,
      );
    });

    it('refuses options of the other log and unknown statuses (exit 2)', async () => {
      server.answer(() => ({ status: 500 }));
      const cases: Array<[string[], RegExp]> = [
        [['logs', 'tail', '--deliveries', '--status', 'ok'], /--status of deliveries must be one of pending, delivered, failed/],
        [['logs', 'tail', '--deliveries', '--capability', 'balance'], /--capability filters executions/],
        [['logs', 'tail', '--deliveries', '--install', 'inst_1'], /--install filters executions/],
        [['logs', 'tail', '--deliveries', '--endpoint', 'primary'], /not an endpoint id/],
        [['logs', 'tail', '--event-type', 'install.created'], /--event-type filters webhook deliveries: add --deliveries/],
        [['logs', 'tail', '--endpoint', 'whe_1'], /--endpoint filters webhook deliveries/],
      ];
      for (const [argv, message] of cases) {
        const t = terminal(env({ SOUL_APP_ID: 'app_1' }));
        expect(await run(argv, t.io)).toBe(2);
        expect((JSON.parse(t.stderr()) as { error: { detail: string } }).error.detail).toMatch(message);
      }
      expect(server.received).toHaveLength(0);
    });
  });
});
