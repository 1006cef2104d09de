import { Body, Controller, Delete, Get, Headers, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { AuthenticatedUser, CurrentUser } from '../access/authenticated-user';
import { UserApi } from '../access/user-auth.guard';
import { DeletionResultDto, ExportPendingDto, ExportResultDto, RequestExportDto } from './dto/privacy.dto';
import { EXPORT_RETRY_AFTER_SECONDS } from './export-formats';
import { ExportsService } from './exports.service';
import { SoulEraser } from './soul-eraser.service';
import { SoulRenewal } from './soul-renewal.service';
import { SoulDto } from '../soul/dto/soul.dto';
import { UserApiErrors } from '../../common/openapi/error-responses';

@ApiTags('privacy')
@UserApi()
@Controller()
export class PrivacyController {
  constructor(
    private readonly exports: ExportsService,
    private readonly eraser: SoulEraser,
    private readonly renewal: SoulRenewal,
  ) {}

  @Post('v1/soul/export')
  @HttpCode(202)
  @ApiOperation({ summary: 'Request a copy of all personal data (json or markdown), built in the background' })
  @ApiHeader({ name: 'Idempotency-Key', required: false, description: 'Repeat the request safely: the same key returns the same export' })
  @ApiResponse({ status: 202, type: ExportResultDto })
  requestExport(
    @CurrentUser() user: AuthenticatedUser,
    @Body() body: RequestExportDto,
    @Headers('idempotency-key') idempotencyKey?: string,
  ): Promise<ExportResultDto> {
    return this.exports.request(user.id, body.format ?? 'json', idempotencyKey);
  }

  @Get('v1/exports/:export_id')
  @ApiOperation({ summary: "Download an export (owner's bearer only); 202 with Retry-After while it is being built" })
  @ApiResponse({
    status: 200,
    description: 'The export document, as an attachment',
    content: {
      'application/json': {
        schema: { type: 'object', additionalProperties: true, description: 'format json: every personal data section' },
      },
      'text/markdown': { schema: { type: 'string', description: 'format markdown: the same data, readable by a person' } },
    },
    headers: { 'Content-Disposition': { description: 'attachment; filename="…"', schema: { type: 'string' } } },
  })
  @ApiResponse({ status: 202, type: ExportPendingDto, description: 'Not built yet; retry after Retry-After seconds' })
  @ApiResponse({ status: 404, description: 'No such export of this user' })
  @ApiResponse({ status: 410, description: 'The export expired (24 h after the request)' })
  @ApiResponse({ status: 500, description: 'The export could not be built; request a new one' })
  async download(
    @CurrentUser() user: AuthenticatedUser,
    @Param('export_id') exportId: string,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<string | ExportPendingDto> {
    const download = await this.exports.download(user.id, exportId);
    void reply.header('cache-control', 'private, no-store');
    if (download.status === 'pending') {
      void reply.status(202).header('retry-after', String(EXPORT_RETRY_AFTER_SECONDS));
      return download.body;
    }
    void reply
      .header('content-type', download.contentType)
      .header('content-disposition', `attachment; filename="${download.filename}"`)
      .header('x-content-type-options', 'nosniff');
    return download.content;
  }

  @Delete('v1/soul')
  @ApiOperation({ summary: 'Permanently delete the soul record, its exports and everything derived from it' })
  @ApiResponse({ status: 200, type: DeletionResultDto })
  @ApiResponse({ status: 404, description: 'There is no soul record (already deleted)' })
  deleteSoul(@CurrentUser() user: AuthenticatedUser): Promise<DeletionResultDto> {
    return this.eraser.erase(user.id);
  }

  @Post('v1/soul')
  @HttpCode(201)
  @ApiOperation({ summary: 'Create a new soul record (initial traits, no values) after the previous one was deleted' })
  @ApiResponse({ status: 201, type: SoulDto })
  @UserApiErrors(409)
  createSoul(@CurrentUser() user: AuthenticatedUser): Promise<SoulDto> {
    return this.renewal.create(user.id);
  }
}
