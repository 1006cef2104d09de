#!/usr/bin/env node
/**
 * A development identity provider, for trying the consumer app (/app) on a
 * machine without a Firebase project. It publishes a JWKS and signs
 * Firebase-shaped ID tokens for any user you name:
 *
 *   npm run dev:idp                        # listens on 127.0.0.1:9099
 *   IDP_JWKS_URL=http://127.0.0.1:9099/jwks IDP_PROJECT_ID=dev-project npm start
 *   curl 'http://127.0.0.1:9099/token?sub=alice&name=Alice&email=alice@example.com'
 *
 * Paste the printed token into the sign-in form at /app. Keys live in memory:
 * restart it and earlier tokens stop verifying. Never point a production
 * service at it.
 */
'use strict';
/* eslint-disable @typescript-eslint/no-require-imports -- plain node script */
const { createServer } = require('node:http');
const { randomUUID } = require('node:crypto');
const { URL } = require('node:url');
const { exportJWK, generateKeyPair, SignJWT } = require('jose');

const PORT = Number(process.env.DEV_IDP_PORT ?? 9099);
const PROJECT = process.env.IDP_PROJECT_ID ?? 'dev-project';
const ISSUER = `https://securetoken.google.com/${PROJECT}`;

async function main() {
  const kid = randomUUID();
  const { privateKey, publicKey } = await generateKeyPair('RS256');
  const jwks = { keys: [{ ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' }] };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://${req.headers.host ?? '127.0.0.1'}`);
    if (url.pathname === '/jwks') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(jwks));
      return;
    }
    if (url.pathname === '/token') {
      const sub = url.searchParams.get('sub');
      if (!sub || !/^[\w.@-]{1,128}$/.test(sub)) {
        res.writeHead(400, { 'content-type': 'text/plain' }).end('sub is required (letters, digits, . _ @ -)\n');
        return;
      }
      const now = Math.floor(Date.now() / 1000);
      const claims = { auth_time: now, user_id: sub, firebase: { sign_in_provider: 'password' } };
      const name = url.searchParams.get('name');
      const email = url.searchParams.get('email');
      void new SignJWT({ ...claims, ...(name ? { name } : {}), ...(email ? { email, email_verified: true } : {}) })
        .setProtectedHeader({ alg: 'RS256', kid, typ: 'JWT' })
        .setIssuer(ISSUER)
        .setAudience(PROJECT)
        .setSubject(sub)
        .setIssuedAt(now)
        .setExpirationTime(now + 3600)
        .sign(privateKey)
        .then((token) => res.writeHead(200, { 'content-type': 'text/plain' }).end(`${token}\n`));
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('GET /jwks or /token?sub=…&name=…&email=…\n');
  });
  server.listen(PORT, '127.0.0.1', () => {
    console.log(`development identity provider on http://127.0.0.1:${PORT}`);
    console.log(`start the service with: IDP_JWKS_URL=http://127.0.0.1:${PORT}/jwks IDP_PROJECT_ID=${PROJECT} npm start`);
    console.log(`get a token with:       curl 'http://127.0.0.1:${PORT}/token?sub=alice&name=Alice'`);
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
