import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { ApiError } from '../../common/errors/api-error';
import { ProblemError } from '../../common/errors/problem-error';
import { isId } from '../../common/ids';
import { SoulService } from '../soul/soul.service';
import { MeDto, OperatorUserDto } from './dto/auth.dto';
import { UserEntity, UserTier } from './entities/user.entity';

/** Profiles of service users. */
@Injectable()
export class UsersService {
  constructor(
    @InjectRepository(UserEntity) private readonly users: Repository<UserEntity>,
    private readonly souls: SoulService,
  ) {}

  async me(userId: string): Promise<MeDto> {
    // Two independent reads: run them together rather than one after the other.
    const [user, soul] = await Promise.all([this.users.findOne({ where: { id: userId } }), this.souls.findByUser(userId)]);
    if (!user) throw new ApiError('UNAUTHORIZED', 'This user no longer exists');
    return { id: user.id, name: user.name, email: user.email, created_at: user.createdAt.toISOString(), soul_id: soul?.id ?? null };
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
    const user = (await this.users.findOne({ where: { id: userId } }))!;
    return { id: user.id, name: user.name, email: user.email, tier: user.tier };
  }
}
