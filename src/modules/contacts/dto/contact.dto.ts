import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsEmail, IsString, Length, MaxLength, ValidateIf } from 'class-validator';
import { AcceptsNull } from '../../../common/validation/null-rule';
import { Trimmed } from './query-params';

export const MAX_CONTACT_NAME = 200;
export const MAX_EMAIL = 320;

/** `POST /v1/contacts`. */
export class CreateContactDto {
  @ApiProperty({ minLength: 1, maxLength: MAX_CONTACT_NAME, example: 'Ada Lovelace' })
  @Trimmed()
  @IsString()
  @Length(1, MAX_CONTACT_NAME)
  name: string;

  @ApiPropertyOptional({
    format: 'email',
    maxLength: MAX_EMAIL,
    nullable: true,
    type: String,
    description:
      'When another service user has verified this address, your messages to the contact reach them. Whether an address has an account is never shown: see `connected`',
  })
  @Trimmed()
  @AcceptsNull()
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(MAX_EMAIL)
  email?: string | null;
}

/** `PATCH /v1/contacts/:id`: fields present are changed; `email: null` removes the address and the link. */
export class UpdateContactDto {
  @ApiPropertyOptional({ minLength: 1, maxLength: MAX_CONTACT_NAME })
  @Trimmed()
  @ValidateIf((o: UpdateContactDto) => o.name !== undefined)
  @IsString()
  @Length(1, MAX_CONTACT_NAME)
  name?: string;

  @ApiPropertyOptional({ format: 'email', maxLength: MAX_EMAIL, nullable: true, type: String })
  @Trimmed()
  @AcceptsNull()
  @IsEmail({}, { message: 'email must be an email address' })
  @MaxLength(MAX_EMAIL)
  email?: string | null;
}

export class ContactDto {
  @ApiProperty({ example: 'con_…' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty({ type: String, nullable: true }) email: string | null;
  @ApiProperty({
    minimum: 0,
    maximum: 100,
    description: 'Derived from messages to the contact, decaying with a 30-day time constant; one decimal',
  })
  relationship_score: number;
  @ApiProperty({ type: String, format: 'date-time', nullable: true, description: 'Last message to the contact or a group it is in' })
  last_interaction: string | null;
  @ApiProperty({
    description:
      'True when you and the person behind this email have added each other (each with the address the other verified at login): you then see each other’s presence, typing and receipts. False otherwise, whether or not the address has an account',
  })
  connected: boolean;
  @ApiProperty({ format: 'date-time' }) created_at: string;
}

export class ContactListDto {
  @ApiProperty({ type: [ContactDto], description: 'By relationship_score descending, then name' }) contacts: ContactDto[];
  @ApiProperty({ description: 'All contacts of the user' }) total: number;
  @ApiProperty() limit: number;
  @ApiProperty() offset: number;
}
