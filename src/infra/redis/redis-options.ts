import type { RedisOptions } from 'ioredis';

/** ioredis options from a `redis://` or `rediss://` URL (user, password, db in the path). */
export function redisOptionsFromUrl(url: string): RedisOptions {
  const u = new URL(url);
  const db = u.pathname.replace(/^\//, '');
  return {
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port ? Number(u.port) : 6379,
    username: u.username ? decodeURIComponent(u.username) : undefined,
    password: u.password ? decodeURIComponent(u.password) : undefined,
    db: db ? Number(db) : 0,
    tls: u.protocol === 'rediss:' ? {} : undefined,
  };
}
