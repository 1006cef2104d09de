import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Like, Repository } from 'typeorm';
import { UserEntity } from '../entities/user.entity';
import { DevAccount } from './dev-identity-keys';

/** The test users of the development identity provider: users who signed in through it (their subject starts with `dev-`). */
@Injectable()
export class DevAccountsRepository {
  constructor(@InjectRepository(UserEntity) private readonly users: Repository<UserEntity>) {}

  async list(limit = 50): Promise<DevAccount[]> {
    const rows = await this.users.find({ where: { idpSubject: Like('dev-%') }, order: { createdAt: 'ASC' }, take: limit });
    return rows.filter((row) => row.email !== null).map((row) => ({ subject: row.idpSubject, name: row.name, email: row.email! }));
  }

  async find(subject: string): Promise<DevAccount | null> {
    const row = await this.users.findOne({ where: { idpSubject: subject } });
    return row && row.email !== null && subject.startsWith('dev-') ? { subject, name: row.name, email: row.email } : null;
  }
}
