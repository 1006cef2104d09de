import { Inject, Logger } from '@nestjs/common';
import { OnGatewayConnection, WebSocketGateway } from '@nestjs/websockets';
import type { IncomingMessage } from 'node:http';
import WebSocket, { RawData } from 'ws';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { GatewayConnection } from './gateway-connection';
import { GatewayConnections } from './gateway-connections.service';
import { GatewayFrames } from './gateway-frames.service';
import { CLOSE, MAX_FRAME_BYTES, parseFrame } from './gateway-protocol';

/**
 * `GET /v1/gateway?token=…` on the api's HTTP server. Thin: authentication
 * and connection state live in GatewayConnections, event rules in GatewayFrames.
 * Frames are handled one at a time per connection, in arrival order, each
 * only while the connection's session still stands.
 */
@WebSocketGateway({ path: '/v1/gateway', maxPayload: MAX_FRAME_BYTES })
export class RealtimeGateway implements OnGatewayConnection {
  private readonly logger = new Logger('Gateway');

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly connections: GatewayConnections,
    private readonly frames: GatewayFrames,
  ) {}

  handleConnection(socket: WebSocket, request: IncomingMessage): void {
    let connection: GatewayConnection | null = null;
    let queued = 0;
    let chain: Promise<unknown> = this.connections.accept(socket, request).then(
      (accepted) => {
        connection = accepted;
        const since = new URL(request.url ?? '/', 'http://gateway.invalid').searchParams.get('since');
        if (accepted && since) return this.frames.handle(accepted, Buffer.from(JSON.stringify({ type: 'sync', data: { since } })), false);
      },
      (error: unknown) => {
        this.logger.error({ err: error }, 'gateway connect failed');
        socket.close(CLOSE.INTERNAL, 'internal error; reconnect later');
      },
    );
    socket.on('message', (data: RawData, isBinary: boolean) => {
      // Rate is judged on arrival; frames arriving before authentication finishes wait, up to one burst.
      if (connection ? !connection.admit() : ++queued > this.config.gateway.frameBurst) {
        if (!connection) socket.close(CLOSE.ABUSE, 'frame rate limit exceeded');
        return;
      }
      chain = chain.then(() => (connection ? this.handleFrame(connection, data, isBinary) : undefined));
    });
  }

  /** A frame on a socket whose session has ended is not handled: the socket is closed instead (see GatewayConnections.admitFrame). */
  private async handleFrame(connection: GatewayConnection, data: RawData, isBinary: boolean): Promise<void> {
    let admitted: boolean;
    try {
      admitted = await this.connections.admitFrame(connection);
    } catch (error) {
      // As over HTTP (503), a session that cannot be checked is an outage, not a refusal: the socket stays, the frame is not handled.
      this.logger.warn(`gateway session check failed: ${(error as Error).message}`);
      const text = isBinary ? '' : (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as Buffer)).toString('utf8');
      return connection.error('SERVICE_UNAVAILABLE', 'The session could not be checked; try again shortly', parseFrame(text).id);
    }
    if (admitted) await this.frames.handle(connection, data, isBinary);
  }
}
