import { BeforeApplicationShutdown, Body, Controller, Get, HttpCode, Inject, Logger, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { ProblemError } from '../../common/errors/problem-error';
import { PlatformProblems } from '../../common/openapi/error-responses';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { AppsService } from '../providers/apps.service';
import { PlatformAuthGuard, PlatformRoute } from '../providers/auth/platform-auth.guard';
import { PlatformPrincipal, PlatformRouteOptions, Principal } from '../providers/auth/platform-principal';
import { visibleAppIds } from '../providers/visible-apps';
import { DevSessions } from './dev-sessions.service';
import { DevAnswerAckDto, DevAnswerDto, DevReadyDto, DevSessionQuery } from './dto/dev-session.dto';

/** The route the CLI posts answers to, and its body limit: the largest tier's 5 MB answer, escaped as a JSON string, with room. */
export const DEV_ANSWER_ROUTE = '/v1/providers/dev/session/calls/:call_id';
export const DEV_ANSWER_BODY_LIMIT = 12 * 1024 * 1024;

/** The stream's rules, checked when it opens and again at every renewal. */
const STREAM_ROUTE: PlatformRouteOptions = { scope: 'capabilities:execute' };

/**
 * Why a stream was ended by the service (`event: end`): the problem that refused its credential, or, when the
 * check itself failed (the database away), a retryable `service_unavailable` that says nothing of the cause.
 */
function endReason(error: unknown): { code: string; detail: string } {
  if (error instanceof ProblemError) return { code: error.code, detail: error.detail };
  return { code: 'service_unavailable', detail: 'The session could not be checked again; reconnect' };
}

/** `soul dev` (docs/runtime-bridge.md, "Developing against the live service"): the stream and the answers. */
@ApiTags('runtime bridge')
@Controller('v1/providers/dev/session')
export class DevSessionsController implements BeforeApplicationShutdown {
  private readonly streams = new Set<ServerResponse>();
  private readonly logger = new Logger(DevSessionsController.name);

  constructor(
    private readonly sessions: DevSessions,
    private readonly apps: AppsService,
    private readonly auth: PlatformAuthGuard,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get()
  @PlatformRoute(STREAM_ROUTE)
  @ApiOperation({
    summary:
      "Open the app's dev session (server-sent events): the runtime calls for the developer's own installs (their user account's verified email is the developer's) come as `call` events, answered with POST …/calls/{call_id}; other users' calls are unaffected",
  })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({
    description:
      'Server-sent events: first `event: ready` with data `{ session_id, app_id, user_id }` (user_id: the developer’s own user account, or null when none has their verified email), then `event: call` per call with data `{ call_id, method, path, headers, body }`; a `: ping` comment every 15 s (`DEV_SESSION_RENEW_MS`), when the credential and the app are also checked again: when the token has expired or been revoked, the developer is suspended, the scope was taken away or the app is gone, the stream ends with `event: end` and data `{ code, detail }` (the problem a new request would get)',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  @PlatformProblems(404)
  async open(
    @Principal() principal: PlatformPrincipal,
    @Query() query: DevSessionQuery,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const [appId] = await visibleAppIds(this.apps, principal, query.app_id ?? (principal.kind === 'app' ? principal.appId : undefined));
    const raw = reply.raw;
    const send = (event: string, data: unknown) => {
      if (!raw.destroyed && !raw.writableEnded) raw.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    };
    const session = await this.sessions.open(appId, principal.developerId, (call) => send('call', call));
    // From here the stream is written by hand: Fastify sends nothing more for this request.
    reply.hijack();
    raw.writeHead(200, {
      ...(reply.getHeaders() as Record<string, string>),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    });
    this.streams.add(raw);
    send('ready', { session_id: session.sessionId, app_id: appId, user_id: session.userId } satisfies DevReadyDto);
    const token = /^Bearer (\S+)$/.exec(request.headers.authorization ?? '')![1];
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearInterval(timer);
      this.streams.delete(raw);
      void session.close().catch(() => undefined);
    };
    const timer = setInterval(() => {
      raw.write(': ping\n\n');
      void this.stillAdmitted(token, appId).then(
        // A stream that closed while its check ran must not bring its session back.
        () => (finished ? undefined : session.renew().catch(() => undefined)),
        (error: unknown) => {
          // No call may reach the developer's machine on a credential that a new request would be refused with.
          if (!(error instanceof ProblemError))
            this.logger.warn({ err: error, appId }, 'dev session: the credential could not be checked again');
          finish();
          send('end', endReason(error));
          raw.end();
        },
      );
    }, this.config.runtimeBridge.devSessionRenewMs);
    request.raw.once('close', finish);
  }

  /** Rejects with the problem a new request would get when the stream's credential or app no longer admits it. */
  private async stillAdmitted(token: string, appId: string): Promise<void> {
    const principal = await this.auth.authenticate(token, STREAM_ROUTE);
    await visibleAppIds(this.apps, principal, appId);
  }

  @Post('calls/:call_id')
  @HttpCode(200)
  @PlatformRoute({ scope: 'capabilities:execute' })
  @ApiOperation({ summary: "The local runtime's answer to one call of the app's dev session (the first answer counts)" })
  @ApiOkResponse({ type: DevAnswerAckDto, description: 'Handed to the waiting call' })
  @PlatformProblems(400, 404)
  async answer(
    @Principal() principal: PlatformPrincipal,
    @Param('call_id') callId: string,
    @Body() body: DevAnswerDto,
  ): Promise<DevAnswerAckDto> {
    const answer =
      body.failure !== undefined
        ? { failure: body.failure, detail: body.detail ?? '' }
        : { status: body.status!, headers: pick(body.headers), body: body.body ?? '' };
    await this.sessions.answer(await visibleAppIds(this.apps, principal), callId, answer);
    return { call_id: callId, status: 'delivered' };
  }

  /** Open streams end with the process, so a deploy does not wait on them; the CLI reconnects. */
  beforeApplicationShutdown(): void {
    for (const stream of this.streams) stream.end();
    this.streams.clear();
  }
}

/** Only the headers the bridge reads from an answer, as strings. */
function pick(headers: Record<string, unknown> | undefined): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    const lower = name.toLowerCase();
    if ((lower === 'content-type' || lower === 'retry-after') && typeof value === 'string') kept[lower] = value;
  }
  return kept;
}
