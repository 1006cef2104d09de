import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ProblemError } from '../../common/errors/problem-error';
import { isId } from '../../common/ids';
import { AuthenticatedUser } from './authenticated-user';
import { MeDto, OperatorUserDto } from './dto/auth.dto';
import { UserEntity, UserTier } from './entities/user.entity';
import { SessionCache } from './session-cache';

/** Profiles of service users. */
@Injectable()
export class UsersService {
  constructor(
    @InjectRepository(UserEntity) private readonly users: Repository<UserEntity>,
    private readonly checkedSessions: SessionCache,
  ) {}

  /** The profile read with the session check of this request (see Sessions.check): no query of its own. */
  me(user: AuthenticatedUser): MeDto {
    const { profile } = user;
    return { id: user.id, name: profile.name, email: profile.email, created_at: profile.createdAt.toISOString(), soul_id: profile.soulId };
  }

  /** Profile fields for other areas (exports, agents). */
  async profile(userId: string): Promise<UserEntity | null> {
    return this.users.findOne({ where: { id: userId } });
  }

  /** Service users with this email address (contacts link to them). */
  async findIdByEmail(email: string): Promise<string | null> {
    const user = await this.users
      .createQueryBuilder('u')
      .where('lower(u.email) = lower(:email)', { email })
      .orderBy('u.created_at')
      .getOne();
    return user?.id ?? null;
  }

  async setTier(userId: string, tier: UserTier): Promise<OperatorUserDto> {
    if (!isId(userId, 'usr')) throw new ProblemError('not_found', `No user ${userId}`);
    const result = await this.users.update({ id: userId }, { tier });
    if (!result.affected) throw new ProblemError('not_found', `No user ${userId}`);
    this.checkedSessions.forgetUser(userId);
    const user = (await this.users.findOne({ where: { id: userId } }))!;
    return { id: user.id, name: user.name, email: user.email, tier: user.tier };
  }
}
