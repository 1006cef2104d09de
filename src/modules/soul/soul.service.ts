import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { EntityManager, Repository } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { newId } from '../../common/ids';
import { SoulDto, UpdateSoulDto } from './dto/soul.dto';
import { SoulEntity } from './entities/soul.entity';
import { INITIAL_TRAITS, SoulTraits } from './soul-traits';

export interface Soul {
  id: string;
  userId: string;
  traits: SoulTraits;
  values: string[];
  updatedAt: Date;
}

export function toSoulDto(soul: Soul): SoulDto {
  return { id: soul.id, user_id: soul.userId, traits: { ...soul.traits }, values: soul.values, updated_at: soul.updatedAt.toISOString() };
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

/** Normalises a values list: trimmed, case-insensitively unique, order kept. */
function cleanValues(values: string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of values) {
    const value = raw.trim();
    if (value && !seen.has(value.toLowerCase())) {
      seen.add(value.toLowerCase());
      out.push(value);
    }
  }
  return out;
}

/** The soul record: one per user, created at first login, permanently deletable. */
@Injectable()
export class SoulService {
  constructor(@InjectRepository(SoulEntity) private readonly souls: Repository<SoulEntity>) {}

  async createInitial(manager: EntityManager, userId: string): Promise<Soul> {
    const entity = manager.create(SoulEntity, {
      id: newId('soul'),
      userId,
      communicationStyle: INITIAL_TRAITS.communication_style,
      humour: INITIAL_TRAITS.humour,
      formality: INITIAL_TRAITS.formality,
      empathy: INITIAL_TRAITS.empathy,
      values: [],
    });
    return fromEntity(await manager.save(entity));
  }

  async findByUser(userId: string, manager?: EntityManager): Promise<Soul | null> {
    const entity = await (manager ? manager.getRepository(SoulEntity) : this.souls).findOne({ where: { userId } });
    return entity ? fromEntity(entity) : null;
  }

  async getByUser(userId: string): Promise<Soul> {
    const soul = await this.findByUser(userId);
    if (!soul) throw new ApiError('NOT_FOUND', 'This user has no soul record (it was deleted)');
    return soul;
  }

  async update(userId: string, patch: UpdateSoulDto): Promise<Soul> {
    return this.souls.manager.transaction(async (manager) => {
      const entity = await manager.getRepository(SoulEntity).findOne({ where: { userId }, lock: { mode: 'pessimistic_write' } });
      if (!entity) throw new ApiError('NOT_FOUND', 'This user has no soul record (it was deleted)');
      const traits = patch.traits ?? {};
      if (traits.communication_style !== undefined) entity.communicationStyle = traits.communication_style;
      if (traits.humour !== undefined) entity.humour = traits.humour;
      if (traits.formality !== undefined) entity.formality = traits.formality;
      if (traits.empathy !== undefined) entity.empathy = traits.empathy;
      if (patch.values !== undefined) entity.values = cleanValues(patch.values);
      return fromEntity(await manager.save(entity));
    });
  }

  /** Deletes the record inside the caller's transaction; false when there was none. */
  async deleteWithin(manager: EntityManager, userId: string): Promise<boolean> {
    const result = await manager.getRepository(SoulEntity).delete({ userId });
    return (result.affected ?? 0) > 0;
  }
}
