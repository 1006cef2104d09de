import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { CursorPageQuery } from '../../../common/pagination/page-query';

/** `GET /v1/sessions?limit&cursor`. */
export class SessionListQueryDto extends CursorPageQuery {}

/** `POST /v1/sessions/revoke-all?keep_current`. */
export class RevokeAllQueryDto {
  @ApiPropertyOptional({ enum: ['true', 'false'], default: 'false', description: 'true: keep the session of the calling token' })
  @IsOptional()
  @IsIn(['true', 'false'])
  keep_current?: 'true' | 'false';
}

export class SessionClientDto {
  @ApiProperty({ example: 'Firefox on Linux', description: 'A short description for people, from the user agent' })
  description: string;
  @ApiProperty({ nullable: true, type: String, description: 'User-Agent of the sign-in request (at most 512 characters)' })
  user_agent: string | null;
  @ApiProperty({ nullable: true, type: String, example: '203.0.113.7', description: 'Address the sign-in request came from' })
  ip_address: string | null;
}

export class SessionDto {
  @ApiProperty({ example: 'ses_4fGq0sWc8nYtR2mKpL7xZa' }) id: string;
  @ApiProperty({ description: 'Sign-in time' }) created_at: string;
  @ApiProperty({ description: 'Last request made with the session, to within a minute' }) last_used_at: string;
  @ApiProperty({ description: 'When its access token expires (an hour after sign-in)' }) expires_at: string;
  @ApiProperty({ type: SessionClientDto }) client: SessionClientDto;
  @ApiProperty({ description: 'true for the session of the token making this request' }) current: boolean;
}

export class SessionListDto {
  @ApiProperty({ type: [SessionDto], description: 'Live sessions (not revoked, not expired), newest first' }) sessions: SessionDto[];
  @ApiProperty({ nullable: true, type: String, description: 'Pass as `cursor` for the next page; null on the last page' })
  next_cursor: string | null;
}

export class RevokedSessionsDto {
  @ApiProperty({ description: 'How many live sessions were revoked' }) revoked: number;
  @ApiProperty({ description: 'Whether the session of the calling token is still live' }) current_session_kept: boolean;
}
