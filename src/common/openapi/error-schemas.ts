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
    description: 'JSON pointer into the descriptor schema at fault (descriptor validation)',
    example: '/capabilities/0/name',
  })
  schema_path?: string;
}
