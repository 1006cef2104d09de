import { Injectable } from '@nestjs/common';
import { UsersRepository } from '../users.repository';
import { DevAccount } from './dev-identity-keys';

/** The test users of the development identity provider: users who signed in through it (their subject starts with `dev-`). */
@Injectable()
export class DevAccounts {
  constructor(private readonly users: UsersRepository) {}

  list(limit = 50): Promise<DevAccount[]> {
    return this.users.listDevAccounts(limit);
  }

  find(subject: string): Promise<DevAccount | null> {
    return this.users.findDevAccount(subject);
  }
}
