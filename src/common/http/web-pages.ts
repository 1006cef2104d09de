import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** The page families built by scripts/build-web.js into dist/web/<name>. */
export const WEB_PAGES = ['app', 'console'] as const;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/**
 * Same-origin everything: the pages call only this service's API and gateway,
 * and no script, style or frame comes from anywhere else. The one exception,
 * only when Firebase web sign-in is configured: the Firebase Auth endpoints
 * the sign-in calls, Google's script for the popup, and the project's auth
 * domain, which hosts the popup's frame.
 */
export function contentSecurityPolicy(firebaseAuthDomain?: string): string {
  const firebase = firebaseAuthDomain !== undefined;
  return [
    "default-src 'self'",
    firebase ? "script-src 'self' https://apis.google.com" : "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    firebase ? "connect-src 'self' https://identitytoolkit.googleapis.com https://securetoken.googleapis.com" : "connect-src 'self'",
    ...(firebase ? [`frame-src https://${firebaseAuthDomain}`] : []),
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

interface Asset {
  body: Buffer;
  type: string;
  /** Hashed file names never change content, so browsers may keep them for a year. */
  immutable: boolean;
}

/** dist/web beside the compiled code, or the built copy when running from sources (tests with ts-jest). */
function findWebRoot(): string | null {
  const candidates = [join(__dirname, '..', '..', 'web'), join(__dirname, '..', '..', '..', 'dist', 'web')];
  return candidates.find((dir) => existsSync(join(dir, WEB_PAGES[0], 'index.html'))) ?? null;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

/**
 * Serves the consumer app at /app and the developer console at /console from
 * memory (a few hundred KiB, read once at start-up, so a request can never
 * reach outside the built files). Every path under a page family that is not
 * a built file answers with its index.html: the page's router takes it from
 * there, so deep links such as /console/verify-email?token=… work.
 */
export function registerWebPages(
  fastify: FastifyInstance,
  options: { firebaseAuthDomain?: string } = {},
  root: string | null = findWebRoot(),
): void {
  const policy = contentSecurityPolicy(options.firebaseAuthDomain);
  const logger = new Logger('WebPages');
  const assets = new Map<string, Asset>();
  if (root) {
    for (const file of filesUnder(root)) {
      const url = '/' + relative(root, file).split(sep).join('/');
      assets.set(url, {
        body: readFileSync(file),
        type: CONTENT_TYPES[extname(file)] ?? 'application/octet-stream',
        immutable: url.includes('/assets/'),
      });
    }
  } else {
    logger.warn('dist/web is missing: /app and /console answer 503 until `npm run build` has run');
  }

  const send = (reply: FastifyReply, asset: Asset) => {
    void reply.header('content-type', asset.type).header('x-content-type-options', 'nosniff').header('referrer-policy', 'no-referrer');
    if (asset.immutable) {
      void reply.header('cache-control', 'public, max-age=31536000, immutable');
    } else {
      void reply.header('cache-control', 'no-cache').header('content-security-policy', policy);
    }
    return reply.send(asset.body);
  };

  for (const page of WEB_PAGES) {
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const path = request.url.split('?')[0];
      const file = assets.get(path);
      if (file) return send(reply, file);
      // A missing hashed asset is a real 404 (an old page asking for a replaced bundle), not a page route.
      if (path.startsWith(`/${page}/assets/`)) return reply.code(404).type('text/plain; charset=utf-8').send('Not found');
      const index = assets.get(`/${page}/index.html`);
      if (!index) return reply.code(503).type('text/plain; charset=utf-8').send('The web pages are not built: run `npm run build`.');
      return send(reply, index);
    };
    fastify.get(`/${page}`, handler);
    fastify.get(`/${page}/*`, handler);
  }
  fastify.get('/', async (_request, reply) => reply.redirect('/app/', 302));
}
