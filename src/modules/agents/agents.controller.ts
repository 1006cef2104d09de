import { Body, Controller, Get, Headers, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AuthenticatedUser, CurrentUser } from '../access/authenticated-user';
import { UserApi } from '../access/user-auth.guard';
import { AgentsService } from './agents.service';
import { AgentActionDto, AgentActionResultDto, ExecuteAgentActionDto } from './dto/agents.dto';
import { UserApiErrors } from '../../common/openapi/error-responses';

@ApiTags('agents')
@UserApi()
@Controller('v1/agents')
export class AgentsController {
  constructor(private readonly agents: AgentsService) {}

  @Post('execute')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Run an agent action (draft_email, summarize_conversation, suggest_reply) on behalf of the user',
    description:
      'Waits up to 2 s for the result. 200 when the action finished (`completed` with `result`, or `failed` with `error`); ' +
      '202 with a `Location` to poll while it is still `queued` or `running`. With an `Idempotency-Key`, a retry answers ' +
      'for the same action with `Idempotent-Replayed: true`.',
  })
  @ApiHeader({ name: 'Idempotency-Key', required: false })
  @ApiOkResponse({ type: AgentActionResultDto })
  @ApiAcceptedResponse({ type: AgentActionResultDto })
  @UserApiErrors(404)
  async execute(
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: ExecuteAgentActionDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<AgentActionResultDto> {
    const outcome = await this.agents.execute(user.id, body, idempotencyKey);
    // 200 when finished (completed or failed); 202 with where to poll while queued or running.
    const headers: Record<string, string> = outcome.replayed ? { 'Idempotent-Replayed': 'true' } : {};
    if (!outcome.finished) headers.Location = `/v1/agents/actions/${outcome.action.id}`;
    void reply.status(outcome.finished ? 200 : 202).headers(headers);
    return outcome.action;
  }

  @Get('actions/:id')
  @ApiOperation({ summary: "Status and result of one of the user's agent actions" })
  @ApiOkResponse({ type: AgentActionDto })
  get(@CurrentUser() user: AuthenticatedUser, @Param('id') id: string): Promise<AgentActionDto> {
    return this.agents.get(user.id, id);
  }
}
