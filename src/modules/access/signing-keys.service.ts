import { createPublicKey, KeyObject } from 'node:crypto';
import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, importPKCS8, JWK, KeyLike } from 'jose';
import { DataSource } from 'typeorm';
import { SecretBox } from '../../common/crypto/secret-box';
import { APP_CONFIG } from '../../config/config.module';
import type { AppConfig } from '../../config/app-config';
import { SigningKeysRepository } from './signing-keys.repository';

export const TOKEN_ALGORITHM = 'ES256';

interface LoadedKey {
  kid: string;
  privateKey: KeyLike;
  publicJwk: JWK;
  publicKey: KeyObject;
}

/**
 * The ES256 key the service signs access tokens with. `TOKEN_SIGNING_KEY` wins
 * when set; otherwise one key is generated per database on first start and
 * stored with its private half encrypted, so every api instance signs with the
 * same key and tokens survive restarts.
 */
@Injectable()
export class SigningKeys implements OnModuleInit {
  private active: LoadedKey;
  private readonly verifying = new Map<string, KeyObject>();
  private publishedJwks: { keys: JWK[] } = { keys: [] };

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly secretBox: SecretBox,
    private readonly keyRows: SigningKeysRepository,
  ) {}

  async onModuleInit(): Promise<void> {
    this.active = this.config.tokenSigningKey ? await this.fromConfiguration(this.config.tokenSigningKey) : await this.fromDatabase();
    const stored = await this.keyRows.findUnretired();
    const keys = new Map<string, JWK>([[this.active.kid, this.active.publicJwk]]);
    for (const key of stored) keys.set(key.kid, key.publicJwk);
    for (const [kid, jwk] of keys)
      this.verifying.set(kid, createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' }));
    this.publishedJwks = { keys: [...keys.entries()].map(([kid, jwk]) => ({ ...jwk, kid, alg: TOKEN_ALGORITHM, use: 'sig' })) };
  }

  get signing(): { kid: string; privateKey: KeyLike } {
    return this.active;
  }

  /** Public key for a `kid`, or undefined for a key this service never had. */
  verificationKey(kid: string | undefined): KeyObject | undefined {
    return kid ? this.verifying.get(kid) : undefined;
  }

  jwks(): { keys: JWK[] } {
    return this.publishedJwks;
  }

  private async fromConfiguration(material: string): Promise<LoadedKey> {
    const privateKey = material.trim().startsWith('{')
      ? ((await importJWK(JSON.parse(material) as JWK, TOKEN_ALGORITHM)) as KeyLike)
      : await importPKCS8(material.replace(/\\n/g, '\n'), TOKEN_ALGORITHM, { extractable: true });
    return this.describe(privateKey);
  }

  private async fromDatabase(): Promise<LoadedKey> {
    return this.dataSource.transaction(async (manager) => {
      // Two instances starting on an empty database must agree on one key.
      await this.keyRows.lockCreation(manager);
      const existing = await this.keyRows.findNewest(manager, TOKEN_ALGORITHM);
      if (existing) {
        let sealed: string;
        try {
          sealed = this.secretBox.open(existing.privateJwkEncrypted);
        } catch {
          throw new Error(
            `the stored token signing key ${existing.kid} cannot be decrypted: ENCRYPTION_KEY is not the key it was sealed with`,
          );
        }
        const privateJwk = JSON.parse(sealed) as JWK;
        return this.describe((await importJWK(privateJwk, TOKEN_ALGORITHM)) as KeyLike);
      }
      const { privateKey } = await generateKeyPair(TOKEN_ALGORITHM, { extractable: true });
      const loaded = await this.describe(privateKey);
      await this.keyRows.insert(manager, {
        kid: loaded.kid,
        algorithm: TOKEN_ALGORITHM,
        publicJwk: loaded.publicJwk,
        privateJwkEncrypted: this.secretBox.seal(JSON.stringify(await exportJWK(privateKey))),
      });
      return loaded;
    });
  }

  private async describe(privateKey: KeyLike): Promise<LoadedKey> {
    const { d: _d, ...publicJwk } = await exportJWK(privateKey);
    const kid = await calculateJwkThumbprint(publicJwk);
    return {
      kid,
      privateKey,
      publicJwk,
      publicKey: createPublicKey({ key: publicJwk as import('node:crypto').JsonWebKey, format: 'jwk' }),
    };
  }
}
