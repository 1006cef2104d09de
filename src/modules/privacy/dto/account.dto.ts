import { ApiProperty } from '@nestjs/swagger';
import { Equals } from 'class-validator';

/** The phrase `DELETE /v1/me` requires, so no client deletes an account by accident. */
export const ACCOUNT_DELETION_CONFIRMATION = 'DELETE';

export class DeleteAccountDto {
  @ApiProperty({ enum: [ACCOUNT_DELETION_CONFIRMATION], description: 'Must be exactly "DELETE": the user confirmed the deletion' })
  @Equals(ACCOUNT_DELETION_CONFIRMATION, { message: 'confirm must be "DELETE" to delete the account' })
  confirm: string;
}

export class AccountDeletionDto {
  @ApiProperty({ example: 'usr_4fGq0sWc8nYtR2mKpL7xZa', description: 'The deleted account' }) id: string;
  @ApiProperty({
    enum: ['erasing', 'erased'],
    description: 'erasing: signed out everywhere, erasure queued; erased: nothing personal is left',
  })
  status: 'erasing' | 'erased';
  @ApiProperty() requested_at: string;
  @ApiProperty() message: string;
}
