import { Global, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DomainEventEntity } from './domain-event.entity';
import { DomainEvents } from './domain-events';
import { EventsRepository } from './events.repository';

@Global()
@Module({
  imports: [TypeOrmModule.forFeature([DomainEventEntity])],
  providers: [DomainEvents, EventsRepository],
  exports: [DomainEvents, EventsRepository],
})
export class EventsModule {}
