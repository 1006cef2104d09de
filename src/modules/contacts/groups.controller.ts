import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthenticatedUser, CurrentUser } from '../access/authenticated-user';
import { UserApi } from '../access/user-auth.guard';
import { CreateGroupDto, GroupDto, GroupListDto, UpdateGroupDto } from './dto/group.dto';
import { pageOf, PageQueryDto } from './dto/page-query.dto';
import { GroupsService } from './groups.service';

@ApiTags('groups')
@UserApi()
@Controller('v1/groups')
export class GroupsController {
  constructor(private readonly groups: GroupsService) {}

  @Post()
  @ApiOperation({ summary: 'Create a group of your contacts (at most 256 members)' })
  @ApiCreatedResponse({ type: GroupDto })
  create(@CurrentUser() user: AuthenticatedUser, @Body() body: CreateGroupDto): Promise<GroupDto> {
    return this.groups.create(user.id, body);
  }

  @Get()
  @ApiOperation({ summary: 'List groups by name (limit 1–100, default 20)' })
  @ApiOkResponse({ type: GroupListDto })
  list(@CurrentUser() user: AuthenticatedUser, @Query() query: PageQueryDto): Promise<GroupListDto> {
    return this.groups.list(user.id, pageOf(query));
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read one group with its member ids' })
  @ApiOkResponse({ type: GroupDto })
  get(@CurrentUser() user: AuthenticatedUser, @Param('id') id: string): Promise<GroupDto> {
    return this.groups.get(user.id, id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Rename a group and/or replace its members' })
  @ApiOkResponse({ type: GroupDto })
  update(@CurrentUser() user: AuthenticatedUser, @Param('id') id: string, @Body() body: UpdateGroupDto): Promise<GroupDto> {
    return this.groups.update(user.id, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a group; its member contacts stay' })
  @ApiNoContentResponse()
  async remove(@CurrentUser() user: AuthenticatedUser, @Param('id') id: string): Promise<void> {
    await this.groups.remove(user.id, id);
  }
}
