import { ApiProperty } from '@nestjs/swagger';
import { RULES_VERSION } from '@soul-service/rules';
import type { SchemaObject } from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';

const nullableString = { nullable: true, type: String } as const;
const nullableTime = { nullable: true, type: String, format: 'date-time' } as const;

/** One dimension of a report (`DimensionReport` in conformance-report.ts), keyed by dimension name. */
export const DIMENSION_REPORT_SCHEMA: SchemaObject = {
  type: 'object',
  required: ['score', 'max', 'ran', 'checks'],
  properties: {
    score: { type: 'number' },
    max: { type: 'number' },
    ran: { type: 'boolean', description: 'False when the dimension was not run (local validation)' },
    checks: {
      type: 'array',
      items: {
        type: 'object',
        required: ['id', 'passed', 'points', 'max', 'detail'],
        properties: {
          id: { type: 'string' },
          passed: { type: 'boolean' },
          points: { type: 'number' },
          max: { type: 'number' },
          detail: { type: 'string' },
          deferred: {
            type: 'boolean',
            description:
              'Present and true on a quick validation for a live check it does not run: 0 of 0 points here, its share left out of the dimension max, scored in a full run',
          },
          warning: {
            type: 'boolean',
            description:
              'Present and true on a warning: advice about what users will see (a preferred component the example data does not fit, a widget that cannot be polled). Worth 0 of 0 points and never blocking; passed is false while the advice applies',
          },
        },
      },
    },
  },
};

/**
 * `rulesVersion` of every verdict: the CLI's `validate` gives the same verdict for the same descriptor
 * when it runs the same rules version, and says so when the versions differ.
 */
export const RULES_VERSION_PROPERTY = {
  type: String,
  example: RULES_VERSION,
  description:
    'Version of the descriptor rules and conformance checks (@soul-service/rules) that gave this verdict; the CLI reports the same version for the same rules, and says when its rules differ from the server’s',
} as const;

export class ConformanceRunDto {
  @ApiProperty() id: string;
  @ApiProperty() packageId: string;
  @ApiProperty() versionId: string;
  @ApiProperty() full: boolean;
  @ApiProperty({ description: 'queued, running, completed or failed' }) status: string;
  @ApiProperty({ nullable: true, type: 'number' }) score: number | null;
  @ApiProperty({ nullable: true, type: Boolean }) passed: boolean | null;
  @ApiProperty({
    nullable: true,
    type: 'object',
    additionalProperties: DIMENSION_REPORT_SCHEMA,
    description: 'Score and findings per dimension',
  })
  dimensions: object | null;
  @ApiProperty(nullableString) error: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty(nullableTime) completedAt: string | null;
  @ApiProperty({
    ...RULES_VERSION_PROPERTY,
    nullable: true,
    description: `${RULES_VERSION_PROPERTY.description}. Null until the run is scored (queued, running, failed) and for runs scored before verdicts named their rules`,
  })
  rulesVersion: string | null;
}

export class ConformanceRunListDto {
  @ApiProperty({ type: [ConformanceRunDto] }) data: ConformanceRunDto[];
}
