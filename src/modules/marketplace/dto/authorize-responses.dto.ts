import { ApiProperty } from '@nestjs/swagger';

export class AuthorizeAppDto {
  @ApiProperty() name: string;
  @ApiProperty() client_id: string;
}

export class AuthorizePackageDto {
  @ApiProperty() id: string;
  @ApiProperty() version: string;
}

/** What the consent screen shows. */
export class AuthorizationRequestDto {
  @ApiProperty({ type: AuthorizeAppDto }) app: AuthorizeAppDto;
  @ApiProperty({ type: AuthorizePackageDto }) package: AuthorizePackageDto;
  @ApiProperty({ type: [String] }) scopes: string[];
  @ApiProperty() redirect_uri: string;
}

export class ConsentDto {
  @ApiProperty({ description: 'The redirect URI with code (and state)' }) redirect_to: string;
  @ApiProperty() install_id: string;
}
