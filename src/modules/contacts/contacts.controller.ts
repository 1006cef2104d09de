import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthenticatedUser, CurrentUser } from '../access/authenticated-user';
import { UserApi } from '../access/user-auth.guard';
import { ContactsService } from './contacts.service';
import { ContactDto, ContactListDto, CreateContactDto, UpdateContactDto } from './dto/contact.dto';
import { pageOf, PageQueryDto } from './dto/page-query.dto';

@ApiTags('contacts')
@UserApi()
@Controller('v1/contacts')
export class ContactsController {
  constructor(private readonly contacts: ContactsService) {}

  @Post()
  @ApiOperation({
    summary: 'Add a contact; messages to it reach the service user who verified its email, which the answer never tells (see `connected`)',
  })
  @ApiCreatedResponse({ type: ContactDto })
  create(@CurrentUser() user: AuthenticatedUser, @Body() body: CreateContactDto): Promise<ContactDto> {
    return this.contacts.create(user.id, body);
  }

  @Get()
  @ApiOperation({ summary: 'List contacts by relationship score (limit 1–100, default 20)' })
  @ApiOkResponse({ type: ContactListDto })
  list(@CurrentUser() user: AuthenticatedUser, @Query() query: PageQueryDto): Promise<ContactListDto> {
    return this.contacts.list(user.id, pageOf(query));
  }

  @Get(':id')
  @ApiOperation({ summary: 'Read one contact' })
  @ApiOkResponse({ type: ContactDto })
  get(@CurrentUser() user: AuthenticatedUser, @Param('id') id: string): Promise<ContactDto> {
    return this.contacts.get(user.id, id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Rename a contact or change its email (the link to a service user follows the email)' })
  @ApiOkResponse({ type: ContactDto })
  update(@CurrentUser() user: AuthenticatedUser, @Param('id') id: string, @Body() body: UpdateContactDto): Promise<ContactDto> {
    return this.contacts.update(user.id, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a contact; it leaves its groups, sent messages stay' })
  @ApiNoContentResponse()
  async remove(@CurrentUser() user: AuthenticatedUser, @Param('id') id: string): Promise<void> {
    await this.contacts.remove(user.id, id);
  }
}
