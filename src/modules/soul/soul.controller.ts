import { Body, Controller, Get, Patch } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthenticatedUser, CurrentUser } from '../access/authenticated-user';
import { UserApi } from '../access/user-auth.guard';
import { SoulDto, UpdateSoulDto } from './dto/soul.dto';
import { SoulService, toSoulDto } from './soul.service';
import { UserApiErrors } from '../../common/openapi/error-responses';

@ApiTags('soul')
@UserApi()
@Controller('v1/soul')
export class SoulController {
  constructor(private readonly souls: SoulService) {}

  @Get()
  @ApiOperation({ summary: "Read the user's soul record" })
  @ApiOkResponse({ type: SoulDto })
  @UserApiErrors(404)
  async get(@CurrentUser() user: AuthenticatedUser): Promise<SoulDto> {
    return toSoulDto(await this.souls.getByUser(user.id));
  }

  @Patch()
  @ApiOperation({ summary: 'Update traits (merged) and values (replaced)' })
  @ApiOkResponse({ type: SoulDto })
  @UserApiErrors(404)
  async update(@CurrentUser() user: AuthenticatedUser, @Body() body: UpdateSoulDto): Promise<SoulDto> {
    return toSoulDto(await this.souls.update(user.id, body));
  }
}
