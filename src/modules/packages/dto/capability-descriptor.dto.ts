import { ApiProperty, ApiPropertyOptional, getSchemaPath } from '@nestjs/swagger';
import { COMPONENTS, DEFAULT_HEARTBEAT_INTERVAL_SECONDS, DEFAULT_REFRESH_INTERVAL_SECONDS, INTENTS, PLACEMENTS } from '@soul-service/rules';

/**
 * The capability descriptor as OpenAPI shows it (docs/descriptor.md explains
 * every field with a complete package per mode). Documentation only: the
 * descriptor contract (packages/rules/src/descriptors/package-descriptor.schema.json, checked by
 * descriptor-contract.ts) validates the input, so these classes carry no
 * class-validator rules. Input classes show what a
 * provider may send (only `type` and `schema` are required, full or short
 * form); stored classes show what the service answers (defaults filled in).
 */

const NAME_PATTERN = '^[A-Za-z0-9._~-]{1,128}$';

/** A JSON Schema (draft-07, or 2020-12 with `$schema`) whose root is `type: object`. */
export class JsonSchemaObjectDto {
  @ApiPropertyOptional({
    description: 'Draft: absent or draft-07 (`http://json-schema.org/draft-07/schema#`), or `https://json-schema.org/draft/2020-12/schema`',
  })
  $schema?: string;
  @ApiProperty({ enum: ['object'] }) type: string;
  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: true,
    description:
      'Property name to schema. Each property must carry `type` (enum, const, $ref or a combinator do not replace it); keywords such as enum, minimum, maximum, maxItems, items, description are supported',
  })
  properties?: Record<string, object>;
  @ApiPropertyOptional({ type: [String] }) required?: string[];
}

/** One entry of a short-form schema map. */
export class ShortFormFieldDto {
  @ApiProperty({ description: 'JSON Schema type of the field: string, number, integer, boolean, object or array' }) type: string;
  @ApiPropertyOptional({ description: 'true: the field is required', default: false }) required?: boolean;
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Schema of the items of an array field' })
  items?: object;
  @ApiPropertyOptional() description?: string;
}

const schemaInput = {
  description:
    'Params (state, history, realtime), input (action) or event data (webhook without `events`) schema. Full form: a JSON Schema with `type: object`. Short form: a map of field name to `{ type, required, items }`, expanded to the full form',
  oneOf: [
    { $ref: getSchemaPath(JsonSchemaObjectDto) },
    { type: 'object', additionalProperties: { $ref: getSchemaPath(ShortFormFieldDto) }, title: 'Short form' },
  ],
};

export class SurfaceGuidanceInputDto {
  @ApiPropertyOptional({
    enum: INTENTS,
    description: 'Default per mode: state and realtime ambient_context, action actionable_insight, history deep_dive, webhook notification',
  })
  intent?: string;
  @ApiPropertyOptional({
    enum: PLACEMENTS,
    isArray: true,
    description: 'Default per mode: state and realtime home_widgets, action and history service_context, webhook daily_brief',
  })
  placement?: string[];
  @ApiPropertyOptional({ enum: COMPONENTS, isArray: true, description: 'Default: the components typical of the mode' })
  preferredComponents?: string[];
  @ApiPropertyOptional({
    enum: COMPONENTS,
    isArray: true,
    deprecated: true,
    description: 'The spec’s other spelling of preferredComponents, stored as preferredComponents; giving both is refused',
  })
  components?: string[];
}

export class SurfaceGuidanceDto {
  @ApiProperty({ enum: INTENTS }) intent: string;
  @ApiProperty({ enum: PLACEMENTS, isArray: true }) placement: string[];
  @ApiProperty({ enum: COMPONENTS, isArray: true }) preferredComponents: string[];
}

export class WebhookEventTypeInputDto {
  @ApiProperty({
    example: 'meeting.updated',
    description: 'Event type, sent as `event` in inbound webhooks: 1 to 200 visible characters without spaces',
  })
  type: string;
  @ApiPropertyOptional({ default: '' }) description?: string;
  @ApiProperty({ type: JsonSchemaObjectDto, description: 'Schema of the event’s `data` (full form)' }) schema: JsonSchemaObjectDto;
}

export class WebhookEventTypeDto {
  @ApiProperty({ example: 'meeting.updated' }) type: string;
  @ApiProperty() description: string;
  @ApiProperty({ type: JsonSchemaObjectDto }) schema: JsonSchemaObjectDto;
}

/** The descriptor's own `examples` field (.spectral.yaml says why Spectral is told it is not an OpenAPI example). */
const exampleList = { type: 'array', items: { type: 'object', additionalProperties: true } } as const;

/** Fields every mode has, as sent. */
class CapabilityInputBase {
  @ApiPropertyOptional({
    pattern: NAME_PATTERN,
    description:
      'Used in runtime paths (`<runtimeUrl>/capabilities/<name>/execute`), so letters, digits, `-`, `.`, `_`, `~`, not `.` or `..`. Default: the mode (`state`), then `state_2`, … for further unnamed ones',
  })
  name?: string;
  @ApiPropertyOptional({ default: '', description: 'What the capability does; shown to users and scored by conformance (documentation)' })
  description?: string;
  @ApiProperty(schemaInput) schema: object;
  @ApiPropertyOptional({
    description:
      'HTTPS base URL of the runtime the service calls for this capability. Default: the package’s `runtimeUrl`, else the previous version’s. All capabilities of a version share one runtime',
  })
  runtimeUrl?: string;
  @ApiPropertyOptional({ type: SurfaceGuidanceInputDto, description: 'Every part optional, defaults per mode' })
  surfaceGuidance?: SurfaceGuidanceInputDto;
  @ApiPropertyOptional({ type: JsonSchemaObjectDto, description: 'Schema of the runtime’s data, result, history items or stream data' })
  responseSchema?: JsonSchemaObjectDto;
  @ApiPropertyOptional({
    ...exampleList,
    description:
      'Examples: `{ params, response }` (state, history), `{ input, response }` (action), `{ data }` (realtime), `{ event, data }` (webhook)',
  })
  examples?: object[];
}

export class StateCapabilityInputDto extends CapabilityInputBase {
  @ApiProperty({ enum: ['state'] }) type: 'state';
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 86_400,
    default: DEFAULT_REFRESH_INTERVAL_SECONDS,
    description: 'Seconds between polls of the runtime for installed capabilities',
  })
  refreshInterval?: number;
}

export class ActionCapabilityInputDto extends CapabilityInputBase {
  @ApiProperty({ enum: ['action'], description: 'Always confirmed by the user before the runtime is called' }) type: 'action';
}

export class HistoryCapabilityInputDto extends CapabilityInputBase {
  @ApiProperty({ enum: ['history'], description: 'The service adds limit, cursor and direction to params' }) type: 'history';
}

export class RealtimeCapabilityInputDto extends CapabilityInputBase {
  @ApiProperty({ enum: ['realtime'], description: 'Streamed from `<runtimeUrl>/capabilities/<name>/stream` (SSE)' }) type: 'realtime';
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 3_600,
    default: DEFAULT_HEARTBEAT_INTERVAL_SECONDS,
    description: 'Seconds between heartbeats; the stream is stale after twice this without an event',
  })
  heartbeatInterval?: number;
}

export class WebhookCapabilityInputDto extends CapabilityInputBase {
  @ApiProperty({ enum: ['webhook'], description: 'The provider pushes events to POST /v1/providers/runtime/webhook' }) type: 'webhook';
  @ApiPropertyOptional({
    type: [WebhookEventTypeInputDto],
    description:
      'Event types this capability may push, each with the schema of its `data`. Default: one type named after the capability, with its `schema`',
  })
  events?: WebhookEventTypeInputDto[];
}

/** Fields every mode has, as stored and answered. */
class CapabilityBase {
  @ApiProperty({ pattern: NAME_PATTERN }) name: string;
  @ApiProperty() description: string;
  @ApiProperty({ type: JsonSchemaObjectDto, description: 'Always the full form' }) schema: JsonSchemaObjectDto;
  @ApiPropertyOptional({
    description: 'Where the service calls this capability (absent until a runtime is declared, and on webhook capabilities)',
  })
  runtimeUrl?: string;
  @ApiProperty({ type: SurfaceGuidanceDto }) surfaceGuidance: SurfaceGuidanceDto;
  @ApiPropertyOptional({ type: JsonSchemaObjectDto }) responseSchema?: JsonSchemaObjectDto;
  @ApiPropertyOptional({ type: 'array', items: {}, description: 'As given (conformance marks down examples that are not objects)' })
  examples?: unknown[];
}

export class StateCapabilityDto extends CapabilityBase {
  @ApiProperty({ enum: ['state'] }) type: 'state';
  @ApiProperty({ type: 'integer' }) refreshInterval: number;
}

export class ActionCapabilityDto extends CapabilityBase {
  @ApiProperty({ enum: ['action'] }) type: 'action';
}

export class HistoryCapabilityDto extends CapabilityBase {
  @ApiProperty({ enum: ['history'] }) type: 'history';
}

export class RealtimeCapabilityDto extends CapabilityBase {
  @ApiProperty({ enum: ['realtime'] }) type: 'realtime';
  @ApiProperty({ type: 'integer' }) heartbeatInterval: number;
}

export class WebhookCapabilityDto extends CapabilityBase {
  @ApiProperty({ enum: ['webhook'] }) type: 'webhook';
  @ApiProperty({ type: [WebhookEventTypeDto] }) events: WebhookEventTypeDto[];
}

export const CAPABILITY_INPUT_MODELS = [
  JsonSchemaObjectDto,
  ShortFormFieldDto,
  StateCapabilityInputDto,
  ActionCapabilityInputDto,
  HistoryCapabilityInputDto,
  RealtimeCapabilityInputDto,
  WebhookCapabilityInputDto,
];
export const CAPABILITY_MODELS = [
  StateCapabilityDto,
  ActionCapabilityDto,
  HistoryCapabilityDto,
  RealtimeCapabilityDto,
  WebhookCapabilityDto,
];

const byMode = (models: Array<{ name: string }>) => ({
  oneOf: models.map((m) => ({ $ref: getSchemaPath(m.name) })),
  discriminator: {
    propertyName: 'type',
    mapping: Object.fromEntries(models.map((m) => [m.name.replace(/Capability(Input)?Dto$/, '').toLowerCase(), getSchemaPath(m.name)])),
  },
});

/** `capabilities` of a create request: one descriptor per capability, full or short form, chosen by `type`. */
export const CAPABILITY_INPUT_ITEMS = byMode(CAPABILITY_INPUT_MODELS.slice(2));
/** `capabilities` of a stored version. */
export const CAPABILITY_ITEMS = byMode(CAPABILITY_MODELS);
