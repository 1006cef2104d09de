import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayUnique, IsArray, IsIn, IsOptional, IsString, IsUrl, Length, MaxLength } from 'class-validator';
import { PLATFORM_SCOPES } from '../scopes';

const URL_RULES = { require_protocol: true, require_tld: false, protocols: ['http', 'https'] };

export class CreateAppDto {
  @ApiProperty() @IsString() @Length(1, 100) name: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(2000) description?: string;
  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsUrl(URL_RULES, { each: true, message: 'redirect_uris must contain absolute URLs' })
  redirect_uris?: string[];
  @ApiPropertyOptional({ description: 'HTTPS endpoint for webhook deliveries' })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  webhook_url?: string;
  @ApiPropertyOptional({ enum: PLATFORM_SCOPES, isArray: true, description: 'Scopes the app may grant; all when omitted' })
  @IsOptional()
  @IsArray()
  @ArrayUnique()
  @IsIn(PLATFORM_SCOPES, { each: true })
  scopes?: string[];
}

export class UpdateAppDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @Length(1, 100) name?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(2000) description?: string;
  @ApiPropertyOptional({ type: [String] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsUrl(URL_RULES, { each: true, message: 'redirect_uris must contain absolute URLs' })
  redirect_uris?: string[];
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(2000) webhook_url?: string;
  @ApiPropertyOptional({ enum: PLATFORM_SCOPES, isArray: true })
  @IsOptional()
  @IsArray()
  @ArrayUnique()
  @IsIn(PLATFORM_SCOPES, { each: true })
  scopes?: string[];
}

export class RuntimeAppDto {
  @ApiProperty() @IsString() @MaxLength(2000) webhook_url: string;
}

export class SetAppTierDto {
  @ApiProperty({
    enum: ['free', 'pro', 'enterprise'],
    description: "The app's provider tier: its platform limits, runtime timeout and response size",
  })
  @IsIn(['free', 'pro', 'enterprise'])
  tier: 'free' | 'pro' | 'enterprise';
}

export class AppDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty() description: string;
  @ApiProperty({ type: [String] }) redirect_uris: string[];
  @ApiProperty({ nullable: true, type: String }) webhook_url: string | null;
  @ApiProperty({ type: [String] }) scopes: string[];
  @ApiProperty() client_id: string;
  @ApiProperty({ enum: ['free', 'pro', 'enterprise'], description: 'Provider tier (set by the operator); Free by default' })
  tier: 'free' | 'pro' | 'enterprise';
  @ApiPropertyOptional({ description: 'Shown once, at creation and rotation' }) client_secret?: string;
  @ApiPropertyOptional({
    description:
      'Signing secret of the webhook profile that setting webhook_url created (every event type, 5 s timeout); shown once, when the profile is created',
  })
  webhook_secret?: string;
  @ApiProperty() created_at: string;
  @ApiProperty() updated_at: string;
}
