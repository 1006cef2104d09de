import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsNotEmpty, IsString, MaxLength } from 'class-validator';
import { USER_TIERS, type UserTier } from '../../access/authenticated-user';

/** Firebase ID tokens are about 1 KB; 8 KB leaves room for large custom claims and bounds what is verified. */
export const MAX_ID_TOKEN_LENGTH = 8192;

export class LoginDto {
  @ApiProperty({ description: 'ID token issued by the identity provider (Firebase)', maxLength: MAX_ID_TOKEN_LENGTH })
  @IsString()
  @IsNotEmpty()
  @MaxLength(MAX_ID_TOKEN_LENGTH)
  firebase_token: string;
}

export class UserSummaryDto {
  @ApiProperty() id: string;
  @ApiProperty() name: string;
  @ApiProperty({ nullable: true, type: String }) email: string | null;
}

export class LoginResultDto {
  @ApiProperty() token: string;
  @ApiProperty() expires_at: string;
  @ApiProperty({ type: UserSummaryDto }) user: UserSummaryDto;
}

export class MeDto extends UserSummaryDto {
  @ApiProperty() created_at: string;
  @ApiProperty({ nullable: true, type: String, description: 'null after the soul record was deleted' }) soul_id: string | null;
}

export class SetTierDto {
  @ApiProperty({ enum: USER_TIERS })
  @IsIn(USER_TIERS)
  tier: UserTier;
}

export class OperatorUserDto extends UserSummaryDto {
  @ApiProperty({ enum: USER_TIERS }) tier: UserTier;
}
