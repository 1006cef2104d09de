import { EventEmitter } from 'node:events';
import WebSocket from 'ws';
import { GatewayConnection } from '../../src/modules/gateway/gateway-connection';
import { parseFrame, requireString } from '../../src/modules/gateway/gateway-protocol';

describe('gateway frames', () => {
  it('parses a frame with type, id and data', () => {
    expect(parseFrame('{"type":"ping","id":"a"}')).toEqual({ id: 'a', frame: { type: 'ping', id: 'a', data: {} } });
  });

  it.each([
    ['not json', 'Frames must be JSON objects'],
    ['[1]', 'Frames must be JSON objects'],
    ['{"id":"x"}', 'type is required'],
    ['{"type":"teleport"}', 'type must be one of'],
    ['{"type":"ping","data":[]}', 'data must be an object'],
    [`{"type":"ping","id":"${'x'.repeat(129)}"}`, 'id must be a string of 1 to 128 characters'],
    ['{"type":"message.send","data":{"content":"a\\ud800b"}}', 'data.content must be well-formed Unicode'],
    ['{"type":"message.send","data":{"recipient_id":"con_\\u0000"}}', 'data.recipient_id must be well-formed Unicode'],
  ])('refuses %s with BAD_REQUEST naming the problem', (text, message) => {
    const { error } = parseFrame(text);
    expect(error).toMatchObject({ code: 'BAD_REQUEST', status: 400 });
    expect(error?.message).toContain(message);
  });

  it('keeps the id of a frame whose type is wrong, so the error points at it', () => {
    expect(parseFrame('{"type":"teleport","id":"q-1"}').id).toBe('q-1');
  });

  it('requires string fields within their length', () => {
    expect(requireString({ a: 'x' }, 'a')).toBe('x');
    expect(() => requireString({}, 'a')).toThrow('a is required');
    expect(() => requireString({ a: 5 }, 'a')).toThrow('a must be a string of 1 to 64 characters');
  });
});

describe('per-connection frame budget', () => {
  function connection() {
    const sent: string[] = [];
    const closes: Array<[number, string]> = [];
    const socket = Object.assign(new EventEmitter(), {
      readyState: WebSocket.OPEN,
      send: (text: string) => sent.push(text),
      close: (code: number, reason: string) => closes.push([code, reason]),
    }) as unknown as WebSocket;
    const user = {
      id: 'usr_1',
      sessionId: 'ses_1',
      tier: 'free' as const,
      profile: { name: 'Ada', email: null, createdAt: new Date(), soulId: null },
    };
    return {
      sent,
      closes,
      conn: new GatewayConnection(socket, user, new Date(Date.now() + 60_000), { framesPerSecond: 1, frameBurst: 3 }),
    };
  }

  it('admits a burst, refuses the next frames with RATE_LIMITED, and closes with 4429 after a burst of refusals', () => {
    const { sent, closes, conn } = connection();
    expect([conn.admit(), conn.admit(), conn.admit()]).toEqual([true, true, true]);
    expect(conn.admit()).toBe(false);
    expect(JSON.parse(sent[0])).toEqual({
      type: 'error',
      data: { code: 'RATE_LIMITED', message: 'More than 1 frames per second; slow down', status: 429 },
    });
    conn.admit();
    conn.admit();
    expect(closes).toEqual([]);
    conn.admit();
    expect(closes).toEqual([[4429, 'frame rate limit exceeded']]);
  });

  it('shows a message id once (fast and durable copies), and forgets the oldest beyond its memory of 1,000', () => {
    const { conn } = connection();
    expect(conn.firstSight('msg_0')).toBe(true);
    expect(conn.firstSight('msg_0')).toBe(false);
    for (let i = 1; i <= 1_000; i++) expect(conn.firstSight(`msg_${i}`)).toBe(true);
    expect(conn.firstSight('msg_1000')).toBe(false);
    // msg_0 was pushed out by the thousand after it.
    expect(conn.firstSight('msg_0')).toBe(true);
  });
});
