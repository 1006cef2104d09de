import { Body, Controller, Param, Patch, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { OperatorGuard } from '../../common/auth/operator.guard';
import { OperatorUserDto, SetTierDto } from './dto/auth.dto';
import { UsersService } from './users.service';

@ApiTags('operator')
@ApiBearerAuth()
@UseGuards(OperatorGuard)
@Controller('v1/operator/users')
export class OperatorUsersController {
  constructor(private readonly users: UsersService) {}

  @Patch(':user_id')
  @ApiOperation({ summary: "Change a user's rate-limit tier" })
  @ApiOkResponse({ type: OperatorUserDto })
  setTier(@Param('user_id') userId: string, @Body() body: SetTierDto): Promise<OperatorUserDto> {
    return this.users.setTier(userId, body.tier);
  }
}
