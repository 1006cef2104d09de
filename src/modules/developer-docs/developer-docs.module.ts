import { Module, OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { contentSecurityPolicy } from '../../common/http/web-pages';
import { DESCRIPTOR_SCHEMA_URL_PATH } from '@soul-service/rules';
import { DOCS_BASE } from './docs-pages';
import { DOCS_CSS, DocsRenderer } from './docs-renderer';

/**
 * The developer docs (`/developers/…`): HTML pages rendered once at start-up and registered on Fastify directly,
 * as /app and /console are (common/http/web-pages.ts): they are pages, not API operations, so they are neither
 * Nest controllers nor in the OpenAPI document. Only the slugs the renderer knows are answered: a path parameter is
 * looked up in a map, never joined to a file path, so `..` or an encoded slash reaches nothing. Api role only (the
 * worker has no HTTP).
 */
export function registerDeveloperDocs(fastify: FastifyInstance, docs: DocsRenderer): void {
  const policy = contentSecurityPolicy();
  const html = (reply: FastifyReply, status: number, body: string) =>
    reply
      .code(status)
      .header('content-type', 'text/html; charset=utf-8')
      .header('content-security-policy', policy)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-cache')
      .send(body);

  fastify.get(DOCS_BASE, (_request, reply) => html(reply, 200, docs.page('')!.html));
  fastify.get(`${DOCS_BASE}/`, (_request, reply) => reply.redirect(DOCS_BASE, 301));
  fastify.get(`${DOCS_BASE}/docs.css`, (_request, reply) =>
    reply
      .header('content-type', 'text/css; charset=utf-8')
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'public, max-age=3600')
      .send(DOCS_CSS),
  );
  // The route map's address of the descriptor schema: one document, one `$id`, so this sends the editor there.
  fastify.get(`${DOCS_BASE}/schemas/package.json`, (_request, reply) => reply.redirect(DESCRIPTOR_SCHEMA_URL_PATH, 301));
  // Pictures: looked up by name in what was read at start-up, like pages. An SVG may not run script or load anything.
  fastify.get<{ Params: { name: string } }>(`${DOCS_BASE}/img/:name`, (request, reply) => {
    const svg = docs.image(request.params.name);
    if (svg === undefined) return html(reply, 404, docs.notFound());
    return reply
      .header('content-type', 'image/svg+xml; charset=utf-8')
      .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'public, max-age=3600')
      .send(svg);
  });
  fastify.get<{ Params: { page: string } }>(`${DOCS_BASE}/:page`, (request, reply) => {
    const page = docs.page(request.params.page);
    return page ? html(reply, 200, page.html) : html(reply, 404, docs.notFound());
  });
}

@Module({ providers: [{ provide: DocsRenderer, useFactory: () => new DocsRenderer() }] })
export class DeveloperDocsModule implements OnModuleInit {
  constructor(
    private readonly http: HttpAdapterHost,
    private readonly docs: DocsRenderer,
  ) {}

  onModuleInit(): void {
    const fastify = this.http.httpAdapter?.getInstance<FastifyInstance>();
    if (fastify) registerDeveloperDocs(fastify, this.docs);
  }
}
