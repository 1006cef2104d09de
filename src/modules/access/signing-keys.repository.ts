import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, IsNull } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';
import { SigningKeyEntity } from './entities/signing-key.entity';

/** First key of the advisory lock under which a key is created (two instances starting on an empty database agree on one). */
const KEY_CREATION_LOCK = 7_340_212;

/** The `signing_keys` table: the service's token signing keys, private halves sealed. */
@Injectable()
export class SigningKeysRepository extends SqlRepository {
  constructor(@InjectDataSource() dataSource: DataSource) {
    super(dataSource);
  }

  /** Keys not retired: their public halves verify tokens. */
  findUnretired(): Promise<SigningKeyEntity[]> {
    return this.dataSource.getRepository(SigningKeyEntity).find({ where: { retiredAt: IsNull() } });
  }

  /** Serialises key creation until the end of `tx`. */
  async lockCreation(tx: Tx): Promise<void> {
    await this.execute('SELECT pg_advisory_xact_lock($1)', [KEY_CREATION_LOCK], tx);
  }

  /** The newest unretired key of an algorithm. */
  findNewest(tx: Tx, algorithm: string): Promise<SigningKeyEntity | null> {
    return this.db(tx)
      .getRepository(SigningKeyEntity)
      .findOne({ where: { retiredAt: IsNull(), algorithm }, order: { createdAt: 'DESC' } });
  }

  async insert(
    tx: Tx,
    key: { kid: string; algorithm: string; publicJwk: SigningKeyEntity['publicJwk']; privateJwkEncrypted: string },
  ): Promise<void> {
    const repository = this.db(tx).getRepository(SigningKeyEntity);
    await repository.save(repository.create(key));
  }
}
