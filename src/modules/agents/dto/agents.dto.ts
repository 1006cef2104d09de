import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsObject, IsString, Length } from 'class-validator';
import { AGENT_ACTION_STATUSES, type AgentActionStatus } from '../entities/agent-action.entity';
import { AGENT_ACTIONS } from '../actions/agent-action-params';

/** `POST /v1/agents/execute`. `params` is validated per action by the service. */
export class ExecuteAgentActionDto {
  @ApiProperty({ enum: AGENT_ACTIONS })
  @IsString()
  @Length(1, 64)
  action: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description:
      'draft_email: { to, subject, context }; summarize_conversation: { contact_id, limit? (1-200, default 50) }; suggest_reply: { contact_id }',
  })
  @IsObject()
  params: Record<string, unknown>;
}

/** Answer of `POST /v1/agents/execute`: `result` once completed, `error` once failed. */
export class AgentActionResultDto {
  @ApiProperty({ example: 'act_…' }) id: string;
  @ApiProperty({ enum: AGENT_ACTION_STATUSES }) status: AgentActionStatus;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Present when completed' })
  result?: Record<string, unknown>;
  @ApiPropertyOptional({ description: 'Present when failed' }) error?: string;
}

/** `GET /v1/agents/actions/:id`. */
export class AgentActionDto {
  @ApiProperty({ example: 'act_…' }) id: string;
  @ApiProperty({ enum: AGENT_ACTIONS }) action: string;
  @ApiProperty({ enum: AGENT_ACTION_STATUSES }) status: AgentActionStatus;
  @ApiProperty({ type: 'object', additionalProperties: true, nullable: true }) result: Record<string, unknown> | null;
  @ApiProperty({ type: String, nullable: true }) error: string | null;
  @ApiProperty() created_at: string;
  @ApiProperty({ type: String, nullable: true }) completed_at: string | null;
}
