import type { JWK } from 'jose';
import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';

/** A key pair the service signs its own access tokens with; the private half is sealed with ENCRYPTION_KEY. */
@Entity('signing_keys')
export class SigningKeyEntity {
  @PrimaryColumn('text') kid: string;
  @Column('text') algorithm: string;
  @Column({ name: 'public_jwk', type: 'jsonb' }) publicJwk: JWK;
  @Column({ name: 'private_jwk_encrypted', type: 'text' }) privateJwkEncrypted: string;
  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' }) createdAt: Date;
  @Column({ name: 'retired_at', type: 'timestamptz', nullable: true }) retiredAt: Date | null;
}
