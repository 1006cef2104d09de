import { Controller, Get } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiError } from '../../common/errors/api-error';

/**
 * The event reference lives in `docs/events.md` (one source for readers of the
 * repository and of `/docs`); `src/` and `dist/` sit at the same depth, so the
 * same relative path works in tests and in the image.
 */
function eventReference(): string {
  try {
    return readFileSync(join(__dirname, '..', '..', '..', 'docs', 'events.md'), 'utf8');
  } catch {
    return 'The event reference is docs/events.md in the service repository.';
  }
}

/**
 * Documents the WebSocket gateway in OpenAPI and answers plain HTTP requests
 * to its path. WebSocket upgrades never reach this controller: the ws adapter
 * takes them on the HTTP server's `upgrade` event.
 */
@ApiTags('gateway')
@Controller('v1/gateway')
export class GatewayController {
  @Get()
  @ApiOperation({ summary: 'Real-time gateway (WebSocket upgrade)', description: eventReference() })
  @ApiQuery({ name: 'token', required: true, description: 'User access token' })
  @ApiQuery({ name: 'since', required: false, description: 'Replay messages received after this ISO 8601 instant' })
  @ApiResponse({ status: 101, description: 'Switching Protocols: the WebSocket is open; the server sends `ready`' })
  @ApiBadRequestResponse({ description: 'A plain HTTP request without `Upgrade: websocket`' })
  upgradeRequired(): never {
    throw new ApiError('BAD_REQUEST', 'This is the WebSocket gateway: connect with a WebSocket client (Upgrade: websocket)');
  }
}
