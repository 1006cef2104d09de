import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';

const VERSION = 'v1';

/**
 * Encrypts secrets at rest with AES-256-GCM under `ENCRYPTION_KEY`.
 * Ciphertext format: `v1.<iv>.<tag>.<data>` (base64url), self-describing so the
 * scheme can change later. Outside production, without a key, a development
 * key derived from the database name is used and a warning is logged once.
 */
@Injectable()
export class SecretBox {
  private readonly key: Buffer;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    if (config.encryptionKey) {
      this.key = config.encryptionKey;
    } else {
      // loadConfig refuses production without ENCRYPTION_KEY; this branch is development and tests only.
      new Logger(SecretBox.name).warn('ENCRYPTION_KEY is not set: using a development key; never do this in production');
      this.key = createHash('sha256').update(`development-only:${config.databaseUrl}`).digest();
    }
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return [VERSION, iv, cipher.getAuthTag(), data].map((part) => (typeof part === 'string' ? part : part.toString('base64url'))).join('.');
  }

  open(sealed: string): string {
    const [version, iv, tag, data] = sealed.split('.');
    if (version !== VERSION || !iv || !tag || data === undefined) throw new Error('unsupported ciphertext format');
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(data, 'base64url')), decipher.final()]).toString('utf8');
  }
}
