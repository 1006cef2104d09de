import { Body, Controller, Delete, HttpCode } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { UserApiErrors } from '../../common/openapi/error-responses';
import { AuthenticatedUser, CurrentUser } from '../access/authenticated-user';
import { UserApi } from '../access/user-auth.guard';
import { AccountDeletion } from './account-deletion.service';
import { AccountDeletionDto, DeleteAccountDto } from './dto/account.dto';

@ApiTags('privacy')
@UserApi()
@Controller()
export class AccountController {
  constructor(private readonly deletion: AccountDeletion) {}

  @Delete('v1/me')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Delete your account: signed out everywhere at once, then everything personal is erased in the background',
    description:
      'Requires the body `{ "confirm": "DELETE" }`. Every session is revoked at once (tokens refused, gateway sockets closed) and the ' +
      'identity is released: signing in again creates a new, empty account. The erasure then removes the soul record, contacts and ' +
      'groups, the messages you sent, exports, agent actions, sessions and OAuth grants; installs end with `install.removed` ' +
      '(reason `account_deleted`) and their tokens are revoked. Messages others sent you stay in their history, and a tombstone ' +
      '(the account id and dates, nothing personal) is kept (docs/privacy.md). Repeating the request answers the same deletion.',
  })
  @ApiResponse({ status: 202, type: AccountDeletionDto })
  @UserApiErrors(400)
  delete(@CurrentUser() user: AuthenticatedUser, @Body() _body: DeleteAccountDto): Promise<AccountDeletionDto> {
    return this.deletion.request(user);
  }
}
