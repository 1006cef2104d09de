import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { plainToInstance, Transform } from 'class-transformer';
import { IsEmail, IsInt, IsOptional, IsString, Length, Matches, Max, Min, ValidationError } from 'class-validator';
import { ApiError } from '../../../common/errors/api-error';
import { RequestValidationError } from '../../../common/errors/request-validation.error';
import { validateRequest } from '../../../common/validation/null-rule';

const trimmed = () => Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value));
const CONTACT_ID = /^con_[0-9A-Za-z]{22}$/;

export const DEFAULT_CONVERSATION_LIMIT = 50;
export const MAX_CONVERSATION_LIMIT = 200;

/** `draft_email`: the spec's three fields. */
export class DraftEmailParams {
  @ApiProperty({ format: 'email' })
  @IsEmail({}, { message: 'to must be an email address' })
  to: string;

  @ApiProperty({ minLength: 1, maxLength: 200 })
  @trimmed()
  @IsString()
  @Length(1, 200)
  subject: string;

  @ApiProperty({ minLength: 1, maxLength: 4000, description: 'What the email should say, in the user’s own words' })
  @trimmed()
  @IsString()
  @Length(1, 4000)
  context: string;
}

export class SummarizeConversationParams {
  @ApiProperty({ example: 'con_…' })
  @IsString()
  @Matches(CONTACT_ID, { message: 'contact_id must be a contact id (con_…)' })
  contact_id: string;

  @ApiPropertyOptional({ minimum: 1, maximum: MAX_CONVERSATION_LIMIT, default: DEFAULT_CONVERSATION_LIMIT })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_CONVERSATION_LIMIT)
  limit?: number;
}

export class SuggestReplyParams {
  @ApiProperty({ example: 'con_…' })
  @IsString()
  @Matches(CONTACT_ID, { message: 'contact_id must be a contact id (con_…)' })
  contact_id: string;
}

/** Every action a user may run, with the class that validates its params. */
export const AGENT_ACTION_PARAMS = {
  draft_email: DraftEmailParams,
  summarize_conversation: SummarizeConversationParams,
  suggest_reply: SuggestReplyParams,
} as const;
export type AgentActionName = keyof typeof AGENT_ACTION_PARAMS;
export const AGENT_ACTIONS = Object.keys(AGENT_ACTION_PARAMS) as AgentActionName[];

/** Actions that read the conversation with one of the user's contacts. */
export const CONVERSATION_ACTIONS: readonly AgentActionName[] = ['summarize_conversation', 'suggest_reply'];

export interface ParsedAgentRequest {
  action: AgentActionName;
  /** Validated, trimmed and with defaults applied: what the worker runs with. */
  params: Record<string, unknown>;
}

export function isAgentAction(action: string): action is AgentActionName {
  return Object.prototype.hasOwnProperty.call(AGENT_ACTION_PARAMS, action);
}

/**
 * Validates `params` against the action's own class. Errors name the field as
 * the client sent it (`params.to`), like the global pipe does for top-level fields.
 */
export async function parseAgentRequest(action: string, params: Record<string, unknown>): Promise<ParsedAgentRequest> {
  if (!isAgentAction(action)) {
    throw new ApiError('BAD_REQUEST', `Unknown action "${action}"; known actions: ${AGENT_ACTIONS.join(', ')}`);
  }
  const instance = plainToInstance<object, Record<string, unknown>>(AGENT_ACTION_PARAMS[action], params);
  const errors = await validateRequest(instance, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length > 0) {
    const parent = new ValidationError();
    parent.property = 'params';
    parent.value = params;
    parent.children = errors;
    throw RequestValidationError.fromClassValidator([parent]);
  }
  const clean: Record<string, unknown> = { ...instance };
  if (action === 'summarize_conversation' && clean.limit === undefined) clean.limit = DEFAULT_CONVERSATION_LIMIT;
  return { action, params: clean };
}
