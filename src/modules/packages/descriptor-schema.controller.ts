import { Controller, Get, Header, UseGuards } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AddressRateLimitGuard } from '../../common/rate-limit/user-rate-limit.guard';
import { DESCRIPTOR_SCHEMA, DESCRIPTOR_SCHEMA_URL_PATH } from '@soul-service/rules';

/** Served as `application/schema+json`, the media type of JSON Schema documents. */
const SCHEMA_MEDIA_TYPE = 'application/schema+json';

/**
 * The package descriptor contract, published: the JSON Schema the service checks create, version and
 * validate bodies with. Public (it describes the API, not anyone's data) and the same for everyone,
 * so caches may keep it; the per-address limit of anonymous routes applies.
 */
@ApiTags('provider packages')
@Controller('v1/providers')
export class DescriptorSchemaController {
  @Get(DESCRIPTOR_SCHEMA_URL_PATH.replace('/v1/providers/', ''))
  @UseGuards(AddressRateLimitGuard)
  @Header('Content-Type', SCHEMA_MEDIA_TYPE)
  @Header('Cache-Control', 'public, max-age=3600')
  @ApiOperation({
    summary: 'The package descriptor JSON Schema (2020-12): every field of a package, version and capability, per mode, with defaults',
    description:
      'The schema the service validates `POST /v1/providers/packages` (the root), `POST …/versions` (`#/$defs/version`) and a validate draft (`#/$defs/draft`) with. Its `$id` is this path. Put `"$schema": "<base URL>/v1/providers/descriptor.schema.json"` at the top of a package JSON file to have an editor check and complete it; the service ignores that member. No credentials needed.',
  })
  @ApiOkResponse({
    description: 'The JSON Schema document',
    content: {
      [SCHEMA_MEDIA_TYPE]: {
        schema: {
          type: 'object',
          required: ['$schema', '$id', '$defs'],
          properties: { $schema: { type: 'string' }, $id: { type: 'string' }, $defs: { type: 'object', additionalProperties: true } },
          additionalProperties: true,
        },
      },
    },
  })
  schema(): object {
    return DESCRIPTOR_SCHEMA;
  }
}
