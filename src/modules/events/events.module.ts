import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DomainEventEntity } from './domain-event.entity';
import { DomainEvents } from './domain-events';

@Global()
@Module({
  imports: [TypeOrmModule.forFeature([DomainEventEntity])],
  providers: [DomainEvents],
  exports: [DomainEvents],
})
export class EventsModule {}
