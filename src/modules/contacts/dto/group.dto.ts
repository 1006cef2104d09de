import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayUnique, IsArray, IsOptional, IsString, Length, MaxLength, ValidateIf } from 'class-validator';
import { Trimmed } from './query-params';

export const MAX_GROUP_NAME = 200;
export const MAX_GROUP_MEMBERS = 256;

/** `POST /v1/groups`. */
export class CreateGroupDto {
  @ApiProperty({ minLength: 1, maxLength: MAX_GROUP_NAME, example: 'Book club' })
  @Trimmed()
  @IsString()
  @Length(1, MAX_GROUP_NAME)
  name: string;

  @ApiPropertyOptional({ type: [String], maxItems: MAX_GROUP_MEMBERS, uniqueItems: true, default: [], description: 'Ids of your contacts' })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_GROUP_MEMBERS)
  @ArrayUnique({ message: 'member_ids must not repeat an id' })
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  member_ids?: string[];
}

/** `PATCH /v1/groups/:id`: `member_ids`, when present, replaces the whole membership. */
export class UpdateGroupDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: MAX_GROUP_NAME })
  @Trimmed()
  @ValidateIf((o: UpdateGroupDto) => o.name !== undefined)
  @IsString()
  @Length(1, MAX_GROUP_NAME)
  name?: string;

  @ApiPropertyOptional({ type: [String], maxItems: MAX_GROUP_MEMBERS, uniqueItems: true })
  @ValidateIf((o: UpdateGroupDto) => o.member_ids !== undefined)
  @IsArray()
  @ArrayMaxSize(MAX_GROUP_MEMBERS)
  @ArrayUnique({ message: 'member_ids must not repeat an id' })
  @IsString({ each: true })
  @MaxLength(64, { each: true })
  member_ids?: string[];
}

export class GroupDto {
  @ApiProperty({ example: 'grp_…' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: [String], description: 'Contact ids, in the order they joined' }) member_ids: string[];
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

export class GroupListDto {
  @ApiProperty({ type: [GroupDto], description: 'By name' }) groups: GroupDto[];
  @ApiProperty({ description: 'All groups of the user' }) total: number;
  @ApiProperty() limit: number;
  @ApiProperty() offset: number;
}
