import { ApiProperty } from '@nestjs/swagger';
import { Matches } from 'class-validator';
import { PageLimit } from '../../common/pagination/page-query';

export class ConformanceRunsQueryDto {
  @ApiProperty({ description: 'The version whose runs to list' })
  @Matches(/^ver_[A-Za-z0-9]{1,64}$/, { message: 'version_id must be a version id' })
  version_id: string;

  @PageLimit({ max: 50, default: 10 }) limit?: number;
}
