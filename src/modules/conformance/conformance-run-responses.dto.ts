import { ApiProperty } from '@nestjs/swagger';
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
}

export class ConformanceRunListDto {
  @ApiProperty({ type: [ConformanceRunDto] }) data: ConformanceRunDto[];
}
