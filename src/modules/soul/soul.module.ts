import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AccessModule } from '../access/access.module';
import { SoulEntity } from './entities/soul.entity';
import { SoulController } from './soul.controller';
import { SoulService } from './soul.service';
import { SoulsRepository } from './souls.repository';

@Module({
  imports: [TypeOrmModule.forFeature([SoulEntity]), AccessModule],
  controllers: [SoulController],
  providers: [SoulService, SoulsRepository],
  exports: [SoulService, SoulsRepository],
})
export class SoulModule {}
