import { Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthenticatedUser, CurrentUser } from '../access/authenticated-user';
import { UserApi } from '../access/user-auth.guard';
import { ActionConfirmations } from './action-confirmations.service';
import { ActionDecisions } from './action-decisions.service';
import { ActionConfirmationDto } from './dto/bridge-responses.dto';
import { PendingActionListDto } from './dto/pending-actions.dto';
import { UserApiErrors } from '../../common/openapi/error-responses';

@ApiTags('actions')
@UserApi()
@Controller('v1/actions')
export class ActionsController {
  constructor(
    private readonly decisions: ActionDecisions,
    private readonly confirmations: ActionConfirmations,
  ) {}

  @Get('pending')
  @ApiOperation({
    summary:
      'The actions waiting for your decision, whoever started them (you, or an app acting for you); decide each with confirm or cancel. New ones also arrive on the gateway as action.pending',
  })
  @ApiOkResponse({ type: PendingActionListDto })
  pending(@CurrentUser() user: AuthenticatedUser) {
    return this.confirmations.pendingFor(user.id);
  }

  @Post(':confirmation_id/confirm')
  @HttpCode(200)
  @ApiOperation({ summary: 'Confirm a pending action: the runtime executes it once, with its idempotency key' })
  @ApiOkResponse({ type: ActionConfirmationDto })
  @UserApiErrors(403, 404, 409)
  confirm(@CurrentUser() user: AuthenticatedUser, @Param('confirmation_id') id: string) {
    return this.decisions.confirm(user.id, id);
  }

  @Post(':confirmation_id/cancel')
  @HttpCode(200)
  @ApiOperation({ summary: 'Cancel a pending action; the runtime is never called' })
  @ApiOkResponse({ type: ActionConfirmationDto })
  @UserApiErrors(404, 409)
  cancel(@CurrentUser() user: AuthenticatedUser, @Param('confirmation_id') id: string) {
    return this.decisions.cancel(user.id, id);
  }
}
