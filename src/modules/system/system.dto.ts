import { ApiProperty } from '@nestjs/swagger';

export class PurgeQueuedDto {
  @ApiProperty() job_id: string;
  @ApiProperty({ enum: ['queued'] }) status: 'queued';
}
