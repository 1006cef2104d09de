import { EventEmitter } from 'node:events';
import { from, of } from 'rxjs';
import { GatewayWsAdapter } from '../../src/modules/gateway/gateway-ws-adapter';

describe('GatewayWsAdapter', () => {
  it('leaves the frames of a gateway without message handlers to the gateway', () => {
    const client = new EventEmitter();
    new GatewayWsAdapter().bindMessageHandlers(client, [], (data) => of(data));
    expect(client.listenerCount('message')).toBe(0);
    expect(client.listenerCount('close')).toBe(0);
  });

  it("still dispatches a gateway's @SubscribeMessage handlers as Nest's adapter does", async () => {
    const client = Object.assign(new EventEmitter(), { readyState: 1, send: jest.fn() });
    const callback = jest.fn((data: unknown) => Promise.resolve({ echoed: data }));
    new GatewayWsAdapter().bindMessageHandlers(
      client,
      [{ message: 'echo', methodName: 'echo', isAckHandledManually: false, callback }],
      (result) => from(result as Promise<unknown>),
    );
    client.emit('message', { data: JSON.stringify({ event: 'echo', data: 'hi' }) });
    expect(callback).toHaveBeenCalledWith('hi', 'echo');
    await new Promise((resolve) => setImmediate(resolve));
    expect(client.send).toHaveBeenCalledWith(JSON.stringify({ echoed: 'hi' }));
  });
});
