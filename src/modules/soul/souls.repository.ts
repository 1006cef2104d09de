import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, Repository } from 'typeorm';
import { SqlRepository, Tx } from '../../infra/database/sql-repository';
import { SoulEntity } from './entities/soul.entity';
import { SoulTraits } from './soul-traits';

export interface Soul {
  id: string;
  userId: string;
  traits: SoulTraits;
  values: string[];
  updatedAt: Date;
}

/** What may change on a soul; an absent field keeps its value. */
export interface SoulChanges {
  traits: Partial<SoulTraits>;
  values?: string[];
}

function fromEntity(entity: SoulEntity): Soul {
  return {
    id: entity.id,
    userId: entity.userId,
    traits: {
      communication_style: entity.communicationStyle as SoulTraits['communication_style'],
      humour: entity.humour as SoulTraits['humour'],
      formality: entity.formality,
      empathy: entity.empathy,
    },
    values: entity.values,
    updatedAt: entity.updatedAt,
  };
}

/** The `souls` table: one row per user. */
@Injectable()
export class SoulsRepository extends SqlRepository {
  constructor(
    @InjectDataSource() dataSource: DataSource,
    @InjectRepository(SoulEntity) private readonly souls: Repository<SoulEntity>,
  ) {
    super(dataSource);
  }

  private entities(tx?: Tx): Repository<SoulEntity> {
    return tx ? tx.getRepository(SoulEntity) : this.souls;
  }

  async insert(tx: Tx, soul: { id: string; userId: string; traits: SoulTraits; values: string[] }): Promise<Soul> {
    const entity = tx.create(SoulEntity, {
      id: soul.id,
      userId: soul.userId,
      communicationStyle: soul.traits.communication_style,
      humour: soul.traits.humour,
      formality: soul.traits.formality,
      empathy: soul.traits.empathy,
      values: soul.values,
    });
    return fromEntity(await tx.save(entity));
  }

  async findByUser(userId: string, tx?: Tx): Promise<Soul | null> {
    const entity = await this.entities(tx).findOne({ where: { userId } });
    return entity ? fromEntity(entity) : null;
  }

  /** Locks the user's soul row (FOR UPDATE), applies the changes and saves; null when there is none. */
  async updateLocked(tx: Tx, userId: string, changes: SoulChanges): Promise<Soul | null> {
    const entity = await tx.getRepository(SoulEntity).findOne({ where: { userId }, lock: { mode: 'pessimistic_write' } });
    if (!entity) return null;
    const traits = changes.traits;
    if (traits.communication_style !== undefined) entity.communicationStyle = traits.communication_style;
    if (traits.humour !== undefined) entity.humour = traits.humour;
    if (traits.formality !== undefined) entity.formality = traits.formality;
    if (traits.empathy !== undefined) entity.empathy = traits.empathy;
    if (changes.values !== undefined) entity.values = changes.values;
    return fromEntity(await tx.save(entity));
  }

  /** False when the user had no soul. */
  async deleteByUser(tx: Tx, userId: string): Promise<boolean> {
    const result = await tx.getRepository(SoulEntity).delete({ userId });
    return (result.affected ?? 0) > 0;
  }
}
