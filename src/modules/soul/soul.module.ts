import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { SoulEntity } from './entities/soul.entity';
import { SoulController } from './soul.controller';
import { SoulService } from './soul.service';

@Module({
  imports: [TypeOrmModule.forFeature([SoulEntity])],
  controllers: [SoulController],
  providers: [SoulService],
  exports: [SoulService],
})
export class SoulModule {}
