import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, IsString, Matches, MaxLength } from 'class-validator';

/** Parameters of the authorization-code request (RFC 6749 §4.1.1 with PKCE, RFC 7636 §4.3). */
export class AuthorizeDto {
  @ApiProperty({ enum: ['code'] }) @IsIn(['code']) response_type: 'code';
  @ApiProperty() @IsString() @MaxLength(200) client_id: string;
  @ApiProperty({ description: 'Exactly one of the app’s registered redirect_uris' }) @IsString() @MaxLength(2000) redirect_uri: string;
  @ApiProperty({ description: 'The package of the app the user installs' })
  @Matches(/^pkg_/, { message: 'package_id must be a package id' })
  package_id: string;
  @ApiPropertyOptional({ description: 'Space-separated install scopes; default capabilities:execute' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  scope?: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(500) state?: string;
  @ApiProperty({ description: 'BASE64URL(SHA256(code_verifier))' })
  @Matches(/^[A-Za-z0-9_-]{43}$/, { message: 'code_challenge must be 43 base64url characters (S256)' })
  code_challenge: string;
  @ApiProperty({ enum: ['S256'] }) @IsIn(['S256'], { message: 'code_challenge_method must be S256' }) code_challenge_method: 'S256';
}
