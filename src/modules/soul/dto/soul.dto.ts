import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { ArrayMaxSize, IsArray, IsIn, IsNumber, IsOptional, IsString, Length, Max, Min, ValidateIf, ValidateNested } from 'class-validator';
import {
  COMMUNICATION_STYLES,
  HUMOUR_STYLES,
  MAX_VALUE_LENGTH,
  MAX_VALUES,
  type CommunicationStyle,
  type HumourStyle,
} from '../soul-traits';

/** Present means set: `null` is refused (400) rather than reaching a NOT NULL column. */
const WhenPresent = () => ValidateIf((_object: unknown, value: unknown) => value !== undefined);

export class SoulTraitsPatch {
  @ApiPropertyOptional({ enum: COMMUNICATION_STYLES })
  @WhenPresent()
  @IsIn(COMMUNICATION_STYLES)
  communication_style?: CommunicationStyle;

  @ApiPropertyOptional({ enum: HUMOUR_STYLES })
  @WhenPresent()
  @IsIn(HUMOUR_STYLES)
  humour?: HumourStyle;

  @ApiPropertyOptional({ minimum: 0, maximum: 1 })
  @WhenPresent()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(1)
  formality?: number;

  @ApiPropertyOptional({ minimum: 0, maximum: 1 })
  @WhenPresent()
  @IsNumber({ allowNaN: false, allowInfinity: false })
  @Min(0)
  @Max(1)
  empathy?: number;
}

/** `PATCH /v1/soul`: traits are merged one by one; `values`, when given, replaces the list. */
export class UpdateSoulDto {
  @ApiPropertyOptional({ type: SoulTraitsPatch })
  @IsOptional()
  @ValidateNested()
  @Type(() => SoulTraitsPatch)
  traits?: SoulTraitsPatch;

  @ApiPropertyOptional({ type: [String], maxItems: MAX_VALUES })
  @WhenPresent()
  @IsArray()
  @ArrayMaxSize(MAX_VALUES)
  @IsString({ each: true })
  @Length(1, MAX_VALUE_LENGTH, { each: true })
  values?: string[];
}

export class SoulDto {
  @ApiProperty() id: string;
  @ApiProperty() user_id: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'communication_style, humour, formality and empathy (as SoulTraitsPatch names them), and any other trait',
  })
  traits: Record<string, unknown>;
  @ApiProperty({ type: [String] }) values: string[];
  @ApiProperty() updated_at: string;
}
