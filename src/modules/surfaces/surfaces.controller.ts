import { Controller, Get, Param } from '@nestjs/common';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthenticatedUser, CurrentUser } from '../access/authenticated-user';
import { UserApi } from '../access/user-auth.guard';
import { SurfacesService } from './surfaces.service';
import { SurfaceDto, SurfaceFieldDto } from './surfaces.dto';

@ApiTags('surfaces')
@ApiExtraModels(SurfaceFieldDto)
@UserApi()
@Controller('v1/surfaces')
export class SurfacesController {
  constructor(private readonly surfaces: SurfacesService) {}

  @Get(':placement')
  @ApiOperation({ summary: 'Component models for a placement, from the cached data of installed capabilities, ordered by intent' })
  @ApiOkResponse({ type: SurfaceDto })
  get(@CurrentUser() user: AuthenticatedUser, @Param('placement') placement: string) {
    return this.surfaces.forPlacement(user.id, placement);
  }
}
