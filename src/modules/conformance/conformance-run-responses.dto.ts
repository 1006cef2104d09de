import { ApiProperty } from '@nestjs/swagger';

const nullableString = { nullable: true, type: String } as const;
const nullableTime = { nullable: true, type: String, format: 'date-time' } as const;

export class ConformanceRunDto {
  @ApiProperty() id: string;
  @ApiProperty() packageId: string;
  @ApiProperty() versionId: string;
  @ApiProperty() full: boolean;
  @ApiProperty({ description: 'queued, running, completed or failed' }) status: string;
  @ApiProperty({ nullable: true, type: 'number' }) score: number | null;
  @ApiProperty({ nullable: true, type: Boolean }) passed: boolean | null;
  @ApiProperty({ nullable: true, type: 'object', additionalProperties: true, description: 'Score and findings per dimension' })
  dimensions: object | null;
  @ApiProperty(nullableString) error: string | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty(nullableTime) completedAt: string | null;
}

export class ConformanceRunListDto {
  @ApiProperty({ type: [ConformanceRunDto] }) data: ConformanceRunDto[];
}
