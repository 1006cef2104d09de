import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '@soul-service/cli';
import { verifyWebhook } from '@soul-service/webhooks';
import { ScriptedServer } from '../../api-client/test/scripted-server';
import { LISTEN_LOOKBACK_MS, ListenCursor } from '../src/commands/listen';
import { terminal } from './terminal';

const at = (ms: number) => new Date(ms).toISOString();
const event = (id: string, createdAt: number, type: 'install.created' | 'install.removed' = 'install.created') => ({
  id,
  type,
  created_at: at(createdAt),
  app_id: 'app_1',
  idempotency_key: `${id}.app_1`,
  data: { install_id: `inst_${id}` },
});

describe('soul listen', () => {
  describe('ListenCursor', () => {
    it('offers the events not forwarded yet, oldest first, within the look-back window of the newest forwarded', () => {
      const t0 = Date.parse('2026-11-26T10:00:00Z');
      const cursor = new ListenCursor({ newest: t0, forwarded: {} });
      expect(cursor.since()).toBe(at(t0 - LISTEN_LOOKBACK_MS));
      const offered = cursor.next([event('evt_c', t0 + 2000), event('evt_a', t0 + 1000), event('evt_old', t0 - LISTEN_LOOKBACK_MS - 1)]);
      expect(offered.map((e) => e.id)).toEqual(['evt_a', 'evt_c']);
      cursor.forwarded(offered[0]);
      // One forwarded is never offered again; one whose forwarding failed is.
      expect(cursor.next(offered).map((e) => e.id)).toEqual(['evt_c']);
      cursor.forwarded(offered[1]);
      expect(cursor.state.newest).toBe(t0 + 2000);
      // Ids older than two windows are forgotten: memory stays bounded.
      cursor.forwarded(event('evt_late', t0 + 3 * LISTEN_LOOKBACK_MS));
      expect(Object.keys(cursor.state.forwarded)).toEqual(['evt_late']);
    });
  });

  describe('forwarding', () => {
    let service: ScriptedServer;
    let receiver: Server;
    let receiverPort: number;
    const delivered: Array<{ headers: Record<string, string | string[] | undefined>; body: Buffer }> = [];
    let events: ReturnType<typeof event>[] = [];
    const t0 = Date.parse('2026-11-26T10:00:00Z');

    beforeAll(async () => {
      service = await ScriptedServer.start();
      service.answer((r) => {
        if (r.path.startsWith('/v1/providers/apps')) return { status: 200, body: { apps: [{ id: 'app_1', name: 'Acme' }] } };
        if (r.path.startsWith('/v1/providers/events')) {
          const since = Date.parse(new URL(r.path, 'http://x').searchParams.get('since') ?? '');
          const page = events.filter((e) => Number.isNaN(since) || Date.parse(e.created_at) >= since).reverse();
          return { status: 200, headers: { date: new Date(t0 + 500).toUTCString() }, body: { events: page, next_cursor: null } };
        }
        return { status: 404, body: {} };
      });
      receiver = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          delivered.push({ headers: req.headers, body: Buffer.concat(chunks) });
          res.writeHead(204).end();
        });
      });
      // Reserve a port, then leave it closed: the receiver is "not running yet".
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      receiverPort = (receiver.address() as AddressInfo).port;
      await new Promise((resolve) => receiver.close(resolve));
    });
    afterAll(async () => {
      await service.close();
      if (receiver.listening) await new Promise((resolve) => receiver.close(resolve));
    });

    let note = () => '';
    const until = async (check: () => boolean, what: string) => {
      const deadline = Date.now() + 10_000;
      while (!check()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${note()}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };

    it('starts from now, keeps an event the receiver did not take, forwards it signed once the receiver runs, and resumes from its state file', async () => {
      const configDir = mkdtempSync(join(tmpdir(), 'soul-listen-'));
      const env = { SOUL_BASE_URL: service.url, SOUL_CONFIG_DIR: configDir, SOUL_TOKEN: 'tok', CI: 'true' };
      events = [event('evt_before', t0)];
      const secretRun = terminal(env);
      expect(await run(['listen', '--print-secret'], secretRun.io)).toBe(0);
      const secret = secretRun.stdout().trim();

      const first = terminal(env);
      const target = `http://127.0.0.1:${receiverPort}/webhooks`;
      const running = run(['listen', '--forward-to', target, '--interval', '0.2'], first.io);
      note = () => first.stdout() + first.stderr();
      await until(() => first.stdout().includes('"ready"'), 'ready');
      expect(JSON.parse(first.stdout().split('\n')[0])).toMatchObject({ ready: true, app_id: 'app_1', forward_to: target, secret });

      events = [...events, event('evt_1', t0 + 1000)];
      // The receiver is down: evt_1 is kept for the next poll (several polls pass).
      await new Promise((resolve) => setTimeout(resolve, 700));
      expect(delivered).toHaveLength(0);
      await new Promise<void>((resolve) => receiver.listen(receiverPort, '127.0.0.1', resolve));
      await until(() => delivered.length === 1, 'evt_1 forwarded');
      first.abort();
      expect(await running).toBe(0);

      const verified = verifyWebhook(delivered[0].body, delivered[0].headers, secret);
      expect(verified).toMatchObject({ id: 'evt_1', type: 'install.created' });
      expect(delivered[0].headers['webhook-id']).toBe('evt_1');
      const state = join(configDir, 'listen');
      expect(readdirSync(state)).toHaveLength(1);
      expect(statSync(join(state, readdirSync(state)[0])).mode & 0o777).toBe(0o600);

      // Stopped; an event arrives; a new run resumes: evt_2 is forwarded, evt_before and evt_1 are not again.
      events = [...events, event('evt_2', t0 + 2000, 'install.removed')];
      const second = terminal(env);
      const resumed = run(['listen', '--forward-to', target, '--interval', '0.2'], second.io);
      await until(() => delivered.length === 2, 'evt_2 forwarded after the restart');
      await new Promise((resolve) => setTimeout(resolve, 500));
      second.abort();
      expect(await resumed).toBe(0);
      expect(delivered.map((d) => (JSON.parse(d.body.toString()) as { id: string }).id)).toEqual(['evt_1', 'evt_2']);
    }, 20_000);

    it('refuses a missing or non-HTTP --forward-to and a bad interval (exit 2)', async () => {
      const configDir = mkdtempSync(join(tmpdir(), 'soul-listen-'));
      const env = { SOUL_BASE_URL: service.url, SOUL_CONFIG_DIR: configDir, SOUL_TOKEN: 'tok', CI: 'true' };
      expect(await run(['listen'], terminal(env).io)).toBe(2);
      expect(await run(['listen', '--forward-to', 'ftp://localhost/x'], terminal(env).io)).toBe(2);
      expect(await run(['listen', '--forward-to', 'http://localhost/x', '--interval', '0'], terminal(env).io)).toBe(2);
    });
  });
});
