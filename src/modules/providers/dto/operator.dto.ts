import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length } from 'class-validator';

export class SuspendDeveloperDto {
  @ApiProperty({ description: 'Why the account is suspended; mailed to the developer', minLength: 1, maxLength: 2000 })
  @IsString()
  @Length(1, 2000)
  reason: string;
}

export class OperatorDeveloperDto {
  @ApiProperty() id: string;
  @ApiProperty() company_name: string;
  @ApiProperty() email: string;
  @ApiProperty({ enum: ['active', 'suspended'] }) status: 'active' | 'suspended';
  @ApiProperty({ nullable: true, type: String, format: 'date-time' }) suspended_at: string | null;
  @ApiProperty({ nullable: true, type: String }) suspension_reason: string | null;
}
