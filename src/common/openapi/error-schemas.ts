import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

/** The body of a user API error: `{ error: { code, message, status } }`. */
export class ApiErrorBodyDto {
  @ApiProperty({ description: 'Stable machine-readable code (BAD_REQUEST, UNAUTHORIZED, NOT_FOUND, …)', example: 'NOT_FOUND' })
  code: string;

  @ApiProperty({ description: 'What went wrong, for a person', example: 'Contact not found' })
  message: string;

  @ApiProperty({ description: 'The HTTP status, repeated', example: 404, type: 'integer' })
  status: number;
}

/** The user API error envelope. */
export class ApiErrorDto {
  @ApiProperty({ type: ApiErrorBodyDto })
  error: ApiErrorBodyDto;
}

/** One of several errors of a refused request (descriptor validation lists every one at once). */
export class ProblemFieldErrorDto {
  @ApiProperty({ description: 'The request field at fault', example: 'capabilities[0].responseschema' })
  field: string;

  @ApiPropertyOptional({
    description:
      'JSONPath into the schema at fault: for invalid_schema, into the capability’s own JSON Schema; otherwise the rule of the descriptor schema (GET /v1/providers/descriptor.schema.json) that refused. Absent where the service names only the field (an inbound event’s data against its event schema)',
    example: '$.$defs.stateCapability.additionalProperties',
  })
  schema_path?: string;

  @ApiProperty({
    description: 'What is wrong, naming the field',
    example: '`capabilities[0].responseschema` is not a known field; did you mean `responseSchema`?',
  })
  message: string;

  @ApiProperty({ description: 'Problem code of this error', enum: ['missing_field', 'invalid_format', 'invalid_schema'] })
  code: string;
}

/** RFC 9457 problem details of the provider platform, OAuth token endpoint and operator API. */
export class ProblemDetailsDto {
  @ApiProperty({
    description: 'URI of the problem type: `{docs_url}/developers/errors#<code>`',
    example: 'https://example.com/developers/errors#not_found',
  })
  type: string;

  @ApiProperty({ description: 'Short summary, fixed per problem type', example: 'Not found' })
  title: string;

  @ApiProperty({ description: 'The HTTP status, repeated', example: 404, type: 'integer' })
  status: number;

  @ApiProperty({ description: 'What went wrong in this occurrence', example: 'No package pkg_123 for this developer' })
  detail: string;

  @ApiPropertyOptional({ description: 'The request path', example: '/v1/providers/packages/pkg_123' })
  instance?: string;

  @ApiPropertyOptional({ description: 'The request field at fault (validation failures)', example: 'name' })
  field?: string;

  @ApiPropertyOptional({
    description: 'JSONPath into the capability schema at fault (invalid_schema)',
    example: '$.properties.amount',
  })
  schema_path?: string;

  @ApiPropertyOptional({
    type: [ProblemFieldErrorDto],
    description:
      'Every error of a refused package, version or validate request, in the order of the body; `field` (and `schema_path` for invalid_schema) above repeat the first',
  })
  errors?: ProblemFieldErrorDto[];
}
