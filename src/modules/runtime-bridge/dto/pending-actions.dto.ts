import { ApiProperty } from '@nestjs/swagger';
import { ActionConfirmationDto } from './bridge-responses.dto';

/** The user's confirmations still waiting for a decision, oldest first (at most 100; each lapses after 15 minutes). */
export class PendingActionListDto {
  @ApiProperty({ type: [ActionConfirmationDto] }) confirmations: ActionConfirmationDto[];
}
