import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, EntityManager } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { newId } from '../../common/ids';
import { SoulDto, UpdateSoulDto } from './dto/soul.dto';
import { INITIAL_TRAITS } from './soul-traits';
import { Soul, SoulsRepository } from './souls.repository';

export type { Soul } from './souls.repository';

export function toSoulDto(soul: Soul): SoulDto {
  return { id: soul.id, user_id: soul.userId, traits: { ...soul.traits }, values: soul.values, updated_at: soul.updatedAt.toISOString() };
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
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly souls: SoulsRepository,
  ) {}

  async createInitial(manager: EntityManager, userId: string): Promise<Soul> {
    return this.souls.insert(manager, { id: newId('soul'), userId, traits: { ...INITIAL_TRAITS }, values: [] });
  }

  async findByUser(userId: string, manager?: EntityManager): Promise<Soul | null> {
    return this.souls.findByUser(userId, manager);
  }

  async getByUser(userId: string): Promise<Soul> {
    const soul = await this.findByUser(userId);
    if (!soul) throw new ApiError('NOT_FOUND', 'This user has no soul record (it was deleted)');
    return soul;
  }

  async update(userId: string, patch: UpdateSoulDto): Promise<Soul> {
    return this.dataSource.transaction(async (manager) => {
      const soul = await this.souls.updateLocked(manager, userId, {
        traits: patch.traits ?? {},
        values: patch.values !== undefined ? cleanValues(patch.values) : undefined,
      });
      if (!soul) throw new ApiError('NOT_FOUND', 'This user has no soul record (it was deleted)');
      return soul;
    });
  }

  /** Deletes the record inside the caller's transaction; false when there was none. */
  async deleteWithin(manager: EntityManager, userId: string): Promise<boolean> {
    return this.souls.deleteByUser(manager, userId);
  }
}
