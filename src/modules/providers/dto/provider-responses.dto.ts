import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { AppDto } from './app.dto';

export class VerificationSentDto {
  @ApiProperty({ enum: [true] }) sent: true;
}

export class MfaEnrolmentDto {
  @ApiProperty({ description: 'TOTP secret (base32), shown once' }) secret: string;
  @ApiProperty({ description: 'otpauth:// URI for authenticator apps' }) otpauth_uri: string;
}

export class AppListDto {
  @ApiProperty({ type: [AppDto] }) apps: AppDto[];
}

/** RFC 6749 §5.1 access token response. */
export class TokenResponseDto {
  @ApiProperty() access_token: string;
  @ApiProperty({ enum: ['Bearer'] }) token_type: 'Bearer';
  @ApiProperty({ type: 'integer', description: 'Seconds until the access token expires' }) expires_in: number;
  @ApiProperty({ description: 'Granted scopes, space separated' }) scope: string;
  @ApiPropertyOptional({ description: 'Issued by the refresh_token and authorization_code grants' }) refresh_token?: string;
}

/** The token endpoint's parameters (form-urlencoded or JSON). */
export class TokenRequestDto {
  @ApiProperty({ enum: ['client_credentials', 'refresh_token', 'authorization_code'] }) grant_type: string;
  @ApiPropertyOptional({ description: 'With client authentication in the body instead of HTTP Basic' }) client_id?: string;
  @ApiPropertyOptional({ description: 'With client authentication in the body instead of HTTP Basic' }) client_secret?: string;
  @ApiPropertyOptional({ description: 'Space-separated scopes (client_credentials)' }) scope?: string;
  @ApiPropertyOptional({ description: 'refresh_token grant' }) refresh_token?: string;
  @ApiPropertyOptional({ description: 'authorization_code grant' }) code?: string;
  @ApiPropertyOptional({ description: 'authorization_code grant' }) redirect_uri?: string;
  @ApiPropertyOptional({ description: 'authorization_code grant (PKCE)' }) code_verifier?: string;
}
