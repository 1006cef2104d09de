import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsNotEmpty, IsOptional, IsString, Length, Matches, MaxLength } from 'class-validator';

export class CreateAccountDto {
  @ApiProperty() @IsString() @Length(1, 200) company_name: string;
  @ApiProperty() @IsEmail() @MaxLength(254) email: string;
  @ApiProperty({ minLength: 12 }) @IsString() @Length(12, 256, { message: 'password must be at least 12 characters' }) password: string;
}

export class VerifyEmailDto {
  @ApiProperty({ description: 'Token from the verification link' }) @IsString() @IsNotEmpty() @MaxLength(200) token: string;
}

export class DeveloperLoginDto {
  @ApiProperty() @IsEmail() email: string;
  @ApiProperty() @IsString() @IsNotEmpty() @MaxLength(256) password: string;
  @ApiPropertyOptional({ description: 'Current TOTP code when MFA is on' })
  @IsOptional()
  @Matches(/^\d{6}$/, { message: 'totp must be 6 digits' })
  totp?: string;
}

export class ConfirmMfaDto {
  @ApiProperty() @Matches(/^\d{6}$/, { message: 'code must be 6 digits' }) code: string;
}

export class AccountDto {
  @ApiProperty() id: string;
  @ApiProperty() company_name: string;
  @ApiProperty() email: string;
  @ApiProperty() email_verified: boolean;
  @ApiProperty({ nullable: true, type: String }) email_verified_at: string | null;
  @ApiProperty() mfa_enabled: boolean;
  @ApiProperty() status: string;
  @ApiProperty() created_at: string;
}

/**
 * The answer to account creation, the same whether the address was new or
 * already had an account; the mail sent to the address tells which.
 */
export class AccountRequestedDto {
  @ApiProperty({ description: 'The address the message was sent to, as given' }) email: string;
  @ApiProperty({ description: 'What to do next, for people' }) message: string;
}

export class DeveloperTokenDto {
  @ApiProperty() token: string;
  @ApiProperty() token_type: 'Bearer';
  @ApiProperty() expires_at: string;
}

export class PasswordResetRequestDto {
  @ApiProperty({ description: 'The address of the developer account' }) @IsEmail() @MaxLength(254) email: string;
}

/**
 * The answer to a reset request, the same whether or not the address has an
 * account; only the mailbox's owner learns which (a link arrives or nothing does).
 */
export class PasswordResetRequestedDto {
  @ApiProperty({ description: 'The address, as given' }) email: string;
  @ApiProperty({ description: 'What to do next, for people' }) message: string;
}

export class PasswordResetConfirmDto {
  @ApiProperty({ description: 'Token from the reset link (single use, 1 hour)' }) @IsString() @IsNotEmpty() @MaxLength(200) token: string;
  @ApiProperty({ minLength: 12, description: 'The new password: the same rules as at sign-up' })
  @IsString()
  @Length(12, 256, { message: 'password must be at least 12 characters' })
  password: string;
}

export class PasswordResetDoneDto {
  @ApiProperty({ description: 'The account address, to log in with' }) email: string;
  @ApiProperty({ description: 'What happened and what to do next, for people' }) message: string;
}
