import { ApiProperty } from '@nestjs/swagger';

export class JwksDto {
  @ApiProperty({
    description: 'Public JSON Web Keys (RFC 7517) of the service access tokens',
    type: 'array',
    items: { type: 'object', additionalProperties: true, required: ['kty', 'kid'] },
  })
  keys: object[];
}
